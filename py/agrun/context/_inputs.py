"""What each kind of input offers a pack, deduplicated, compressed and ranked.

One function per data type (spec 001 section 8); each returns candidate items in the
order they should be admitted, and records what it left out on the build.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._item import Item

if TYPE_CHECKING:
    from ._build import Build, ContextLayer

__all__ = [
    "admit_memory",
    "approvals",
    "artifacts",
    "deep_memory",
    "events",
    "extension",
    "steering",
    "tool_outputs",
]

LAYERS = ("L0", "L1", "L2", "L3", "L4")


def steering(build: Build) -> list[Item]:
    """Steering notes, verbatim, newest first."""
    notes = build.req.steering
    items = [
        Item("L0", "steering", build.redactor.redact(n.text), (n.id,), (0, 3, p))
        for p, n in enumerate(notes)
    ]
    return items[::-1]


def approvals(build: Build) -> list[Item]:
    """Every approval, newest first (none if L1 is not asked for)."""
    if "L1" not in build.req.options.layers:
        for a in build.req.approvals:
            build.drop("approval", "layer_not_requested", a.id)
        return []
    items = []
    for p, a in enumerate(build.req.approvals):
        who = f" by {a.by}" if a.by else ""
        content = build.redactor.redact(f"{a.action}: {a.decision}{who}")
        items.append(Item("L1", "approval", content, (a.id,), (1, 1, p)))
    return items[::-1]


def artifacts(build: Build) -> list[Item]:
    """The latest valid version of each artifact, cut to size, by relevance."""
    latest: dict[str, tuple[int, int]] = {}
    artifacts = build.req.artifacts
    for p, art in enumerate(artifacts):
        build.tally.dedup_checked += 1
        if not art.valid:
            build.drop("artifact", "invalid_artifact", art.id)
            continue
        best = latest.get(art.name)
        if best is None or (art.version, p) > best:
            latest[art.name] = (art.version, p)
    keep = {p for _, p in latest.values()}
    items = []
    for p, art in enumerate(artifacts):
        if not art.valid:
            continue
        if p not in keep:
            build.tally.dedup_hits += 1
            build.drop("artifact", "superseded", art.id)
            continue
        if "L1" not in build.req.options.layers:
            build.drop("artifact", "layer_not_requested", art.id)
            continue
        limit = build.req.options.max_artifact_tokens
        text = build.redactor.redact(art.content)
        content, compressed = build.compress("artifact", art.id, text, limit)
        item = Item("L1", "artifact", content, (art.id,), (1, 0, p), name=art.name)
        item.compressed = compressed
        items.append(item)
    return build.rank(items)


def tool_outputs(build: Build) -> list[Item]:
    """Tool outputs, newest of identical ones only, compressed; failures first, then by
    relevance."""
    seen: set[tuple[str, str]] = set()
    failed: set[str] = set()
    items = []
    outputs = sorted(enumerate(build.req.tool_outputs), key=lambda e: (e[1].seq, e[0]))
    for p, out in reversed(outputs):
        build.tally.dedup_checked += 1
        key = (out.tool, out.content)
        if key in seen:
            build.tally.dedup_hits += 1
            build.drop("tool_output", "duplicate", out.id)
            continue
        seen.add(key)
        text = build.redactor.redact(out.content)
        limit = build.req.options.max_tool_output_tokens
        content, compressed = build.compress("tool_output", out.id, text, limit)
        item = Item("L0", "tool_output", content, (out.id,), (0, 5, out.seq, p))
        item.name, item.compressed = out.tool, compressed
        items.append(item)
        if out.is_error:
            failed.add(out.id)
    return sorted(build.rank(items), key=lambda item: item.sources[0] not in failed)


def events(build: Build) -> list[Item]:
    """Events, newest of identical ones only, by relevance times temporal decay."""
    events = build.req.events
    if not events:
        return []
    now = build.req.now_ms if build.req.now_ms is not None else max(e.at_ms for e in events)
    half_life = build.req.options.event_half_life_ms
    seen: set[tuple[str, str]] = set()
    items = []
    ordered = sorted(enumerate(events), key=lambda e: (e[1].at_ms, e[0]))
    for p, ev in reversed(ordered):
        build.tally.dedup_checked += 1
        if (ev.kind, ev.text) in seen:
            build.tally.dedup_hits += 1
            build.drop("event", "duplicate", ev.id)
            continue
        seen.add((ev.kind, ev.text))
        content = build.redactor.redact(ev.text)
        items.append(Item("L0", "event", content, (ev.id,), (0, 6, ev.at_ms, p)))
    scores = build.ranker.score(build.query, [i.content for i in items])
    for item, score in zip(items, scores, strict=True):
        age = max(now - item.order[2], 0)
        item.score = round((1.0 + float(score)) * 0.5 ** (age / half_life), 6)
    return sorted(items, key=lambda i: (-(i.score or 0.0), -i.order[2], -i.order[3]))


def extension(build: Build, layer: ContextLayer) -> list[Item]:
    """An extension layer's entries, redacted, in the order it gave them."""
    items = []
    for p, entry in enumerate(layer.entries(build.req)):
        item = Item(
            entry.layer,
            entry.kind,
            build.redactor.redact(entry.content),
            entry.sources or (f"{layer.name}-{p}",),
            (5, 0, p),
            role=entry.role,
            name=entry.name,
            score=entry.score,
        )
        items.append(item)
    return items


def admit_memory(build: Build, summary: Item | None) -> list[Any]:
    """Admit L2 (the summary, then memory newest first) after the session cap; returns
    the L2 items the cap moved into L3."""
    req = build.req
    l2 = [(p, m) for p, m in enumerate(req.memory) if m.layer == "L2" and m.kind != "debug"]
    l2.sort(key=lambda e: (e[1].seq, e[0]))
    items = [
        Item("L2", "memory", build.redactor.redact(m.text), (m.id,), (2, 0, m.seq, p))
        for p, m in l2
    ]
    for item in items:
        build.count(item)
    cap = req.budget.session_l2_cap
    cut = 0
    if cap is not None:
        total = sum(i.tokens for i in items)
        while cut < len(items) and total > cap:
            total -= items[cut].tokens
            cut += 1
    moved, items = items[:cut], items[cut:]
    if "L2" not in req.options.layers:
        for item in items:
            build.drop("memory", "layer_not_requested", item.sources[0])
        return moved
    candidates = items[::-1]
    if summary is not None:
        candidates.insert(0, summary)
    build.admit_ranked(candidates)
    return moved


def deep_memory(build: Build, moved: list[Item]) -> list[Item]:
    """L3 (with merged L2), L4 and debug projections, when their layers are asked for."""
    req = build.req
    items: list[Item] = []
    if moved:
        merged = Item(
            "L3",
            "merged_memory",
            "\n".join(i.content for i in moved),
            tuple(s for i in moved for s in i.sources),
            (3, 1, 0, 0),
        )
        items.append(merged)
    for p, m in enumerate(req.memory):
        if m.layer == "L2" and m.kind != "debug":
            continue
        order = (LAYERS.index(m.layer), 0, m.seq, p)
        items.append(Item(m.layer, "memory", build.redactor.redact(m.text), (m.id,), order))
    kept = []
    for item in items:
        if item.layer not in req.options.layers:
            if item.kind != "merged_memory":
                build.drop("memory", "layer_not_requested", item.sources[0])
            continue
        kept.append(item)
    # L3 before L4, debug projections last; newest first inside each.
    debug_ids = {m.id for m in req.memory if m.kind == "debug"}
    kept.sort(key=lambda i: (i.sources[0] in debug_ids, i.layer, -i.order[2], -i.order[3]))
    return kept
