"""What each kind of input offers a pack, deduplicated, compressed and ranked.

One function per data type (spec 001 section 8): each takes the build's `Plan` and returns
its candidate items in the order they should be admitted; what it leaves out, the
compressions it applies and its dedup counts go to the `Ledger` it is given. Every text
and name that reaches an entry is redacted here; ids are references and stay as given.
Each loop steps the build's checkpoint, so a cancelled build stops inside a long input.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._item import Item
from ._layer import ContextLayer
from ._ledger import Ledger
from ._plan import LAYERS, Plan
from ._recall_text import terms_of

__all__ = [
    "SessionL2",
    "approvals",
    "artifacts",
    "deep_memory",
    "events",
    "extension",
    "merged_memory",
    "session_memory",
    "steering",
    "tool_outputs",
]


def steering(plan: Plan, ledger: Ledger) -> list[Item]:
    """Steering notes, verbatim, newest first."""
    items = []
    for p, n in enumerate(plan.req.steering):
        plan.checkpoint.step()
        items.append(Item("L0", "steering", plan.redactor.redact(n.text), (n.id,), (0, 3, p)))
    return items[::-1]


def approvals(plan: Plan, ledger: Ledger) -> list[Item]:
    """Every approval, newest first (none if L1 is not asked for)."""
    if "L1" not in plan.req.options.layers:
        for a in plan.req.approvals:
            ledger.drop("approval", "layer_not_requested", a.id)
        return []
    items = []
    for p, a in enumerate(plan.req.approvals):
        plan.checkpoint.step()
        who = f" by {a.by}" if a.by else ""
        content = plan.redactor.redact(f"{a.action}: {a.decision}{who}")
        items.append(Item("L1", "approval", content, (a.id,), (1, 1, p)))
    return items[::-1]


def artifacts(plan: Plan, ledger: Ledger) -> list[Item]:
    """The latest valid version of each artifact, cut to size, by relevance."""
    latest: dict[str, tuple[int, int]] = {}
    artifacts = plan.req.artifacts
    for p, art in enumerate(artifacts):
        plan.checkpoint.step()
        ledger.dedup_checked += 1
        if not art.valid:
            ledger.drop("artifact", "invalid_artifact", art.id)
            continue
        best = latest.get(art.name)
        if best is None or (art.version, p) > best:
            latest[art.name] = (art.version, p)
    keep = {p for _, p in latest.values()}
    items = []
    for p, art in enumerate(artifacts):
        plan.checkpoint.step()
        if not art.valid:
            continue
        if p not in keep:
            ledger.dedup_hits += 1
            ledger.drop("artifact", "superseded", art.id)
            continue
        if "L1" not in plan.req.options.layers:
            ledger.drop("artifact", "layer_not_requested", art.id)
            continue
        limit = plan.req.options.max_artifact_tokens
        text = plan.redactor.redact(art.content)
        content, compressed = plan.compress(ledger, "artifact", art.id, text, limit)
        name = plan.redact_name(art.name)
        item = Item("L1", "artifact", content, (art.id,), (1, 0, p), name=name)
        item.compressed = compressed
        items.append(item)
    return plan.rank(items)


def tool_outputs(plan: Plan, ledger: Ledger) -> list[Item]:
    """Tool outputs, newest of identical ones only, compressed; failures first, then by
    relevance."""
    seen: set[tuple[str, str]] = set()
    failed: set[str] = set()
    items = []
    outputs = sorted(enumerate(plan.req.tool_outputs), key=lambda e: (e[1].seq, e[0]))
    for p, out in reversed(outputs):
        plan.checkpoint.step()
        ledger.dedup_checked += 1
        key = (out.tool, out.content)
        if key in seen:
            ledger.dedup_hits += 1
            ledger.drop("tool_output", "duplicate", out.id)
            continue
        seen.add(key)
        text = plan.redactor.redact(out.content)
        limit = plan.req.options.max_tool_output_tokens
        if out.tool in plan.req.options.whole_tools:
            content, compressed = text, False
        else:
            content, compressed = plan.compress(ledger, "tool_output", out.id, text, limit)
        item = Item("L0", "tool_output", content, (out.id,), (0, 5, out.seq, p))
        item.name, item.compressed = plan.redact_name(out.tool), compressed
        items.append(item)
        if out.is_error:
            failed.add(out.id)
    return sorted(plan.rank(items), key=lambda item: item.sources[0] not in failed)


def events(plan: Plan, ledger: Ledger) -> list[Item]:
    """Events, newest of identical ones only, by relevance times temporal decay."""
    events = plan.req.events
    if not events:
        return []
    now = plan.req.now_ms if plan.req.now_ms is not None else max(e.at_ms for e in events)
    half_life = plan.req.options.event_half_life_ms
    seen: set[tuple[str, str]] = set()
    items = []
    ordered = sorted(enumerate(events), key=lambda e: (e[1].at_ms, e[0]))
    for p, ev in reversed(ordered):
        plan.checkpoint.step()
        ledger.dedup_checked += 1
        if (ev.kind, ev.text) in seen:
            ledger.dedup_hits += 1
            ledger.drop("event", "duplicate", ev.id)
            continue
        seen.add((ev.kind, ev.text))
        content = plan.redactor.redact(ev.text)
        # The event's kind only deduplicates; it is never rendered, so only its text is
        # redacted.
        items.append(Item("L0", "event", content, (ev.id,), (0, 6, ev.at_ms, p)))
    scores = plan.ranker.score(plan.query, [i.content for i in items])
    for item, score in zip(items, scores, strict=True):
        age = max(now - item.order[2], 0)
        item.score = round((1.0 + float(score)) * 0.5 ** (age / half_life), 6)
    return sorted(items, key=lambda i: (-(i.score or 0.0), -i.order[2], -i.order[3]))


def extension(plan: Plan, layer: ContextLayer) -> list[Item]:
    """An extension layer's entries, redacted, in the order it gave them."""
    items = []
    for p, entry in enumerate(layer.entries(plan.req)):
        plan.checkpoint.step()
        item = Item(
            entry.layer,
            entry.kind,
            plan.redactor.redact(entry.content),
            entry.sources or (f"{layer.name}-{p}",),
            (5, 0, p),
            role=entry.role,
            name=plan.redact_name(entry.name),
            score=entry.score,
        )
        items.append(item)
    return items


@dataclass
class SessionL2:
    """L2 memory as the session cap and the request leave it (spec 001 sections 9, 10)."""

    relevant: list[Item] = field(default_factory=list)
    """Entries that share a content word with the request, most relevant first."""
    unrelated: list[Item] = field(default_factory=list)
    """The others, newest first: on overflow the oldest goes first (section 9)."""
    moved: list[Item] = field(default_factory=list)
    """The oldest entries past the session cap, oldest first, merged into L3 (section 10)."""


def session_memory(plan: Plan, ledger: Ledger) -> SessionL2:
    """L2 memory, split: the oldest entries past ``budget.sessionL2Cap`` move to L3, and
    the rest are ranked against the request.

    An entry is relevant when it shares a content word with the goal, query, topic or
    input (stop words left out, light stemming: what recall reads); relevant entries are
    ordered by the ranker's score (ties: newer first), the others newest first."""
    req = plan.req
    l2 = [(p, m) for p, m in enumerate(req.memory) if m.layer == "L2" and m.kind != "debug"]
    l2.sort(key=lambda e: (e[1].seq, e[0]))
    items = []
    for p, m in l2:
        plan.checkpoint.step()
        item = Item("L2", "memory", plan.redactor.redact(m.text), (m.id,), (2, 0, m.seq, p))
        plan.count(item)
        items.append(item)
    cap = req.budget.session_l2_cap
    cut = 0
    if cap is not None:
        total = sum(i.tokens for i in items)
        while cut < len(items) and total > cap:
            total -= items[cut].tokens
            cut += 1
    out = SessionL2(moved=items[:cut])
    if "L2" not in req.options.layers:
        for item in items[cut:]:
            ledger.drop("memory", "layer_not_requested", item.sources[0])
        return out
    wanted = set(terms_of(plan.query))
    related = [i for i in items[cut:] if _shares(wanted, i)]
    out.relevant = plan.rank(related) if related else []
    out.unrelated = [i for i in reversed(items[cut:]) if not _shares(wanted, i)]
    return out


def _shares(wanted: set[str], item: Item) -> bool:
    return bool(wanted) and not wanted.isdisjoint(terms_of(item.content))


def merged_memory(plan: Plan, ledger: Ledger, moved: list[Item], *, related: bool) -> Item | None:
    """The L3 entry the session cap merged L2 into, or None (L3 not asked for, nothing
    to merge, or nothing fits).

    With ``related``, the moved entries that share a content word with the request, most
    relevant first; without, the newest moved entries. Either way within
    ``summaryMaxTokens`` and what the budget has left, listed in the order they were
    written. Its ``sources`` are the entries it holds; ``movedToL3`` lists them all."""
    if not moved or "L3" not in plan.req.options.layers:
        return None
    if related:
        wanted = set(terms_of(plan.query))
        near = [i for i in moved if _shares(wanted, i)]
        ranked = plan.rank(near) if near else []
    else:
        ranked = moved[::-1]
    limit = min(plan.req.options.summary_max_tokens, ledger.available - ledger.used)
    chosen: list[Item] = []
    used = 0
    for item in ranked:
        plan.checkpoint.step()
        cost = plan.tok.count(item.content) + 1
        if used + cost <= limit:
            used += cost
            chosen.append(item)
    while chosen:
        lines = sorted(chosen, key=lambda i: i.order)
        merged = Item(
            "L3",
            "merged_memory",
            "\n".join(i.content for i in lines),
            tuple(i.sources[0] for i in lines),
            (3, 1, 0, 0),
        )
        # The frame and the joins cost a little more than the lines: drop the least
        # relevant line until the whole entry fits.
        if plan.count(merged) <= ledger.available - ledger.used:
            return merged
        chosen.pop()
    return None


def deep_memory(plan: Plan, ledger: Ledger, merged: Item | None) -> list[Item]:
    """L3 (with the merged L2 entry, if given), L4 and debug projections, when their
    layers are asked for."""
    req = plan.req
    items: list[Item] = [] if merged is None else [merged]
    for p, m in enumerate(req.memory):
        plan.checkpoint.step()
        if m.layer == "L2" and m.kind != "debug":
            continue
        order = (LAYERS.index(m.layer), 0, m.seq, p)
        items.append(Item(m.layer, "memory", plan.redactor.redact(m.text), (m.id,), order))
    kept = []
    for item in items:
        if item.layer not in req.options.layers:
            if item.kind != "merged_memory":
                ledger.drop("memory", "layer_not_requested", item.sources[0])
            continue
        kept.append(item)
    # L3 before L4, debug projections last; newest first inside each.
    debug_ids = {m.id for m in req.memory if m.kind == "debug"}
    kept.sort(key=lambda i: (i.sources[0] in debug_ids, i.layer, -i.order[2], -i.order[3]))
    return kept
