"""The content store under stress (spec 002, issue 13): many turns against small limits,
with the runtime reopened on its storage every few turns, must never hold more than its
limits allow, in memory or in what storage keeps, and must evict the same entries however
often it was reloaded and whichever store it runs on.

The turns are seeded: host skill runs that write bodies (text, lists, objects, some larger
than the whole store), read earlier refs (live, evicted or expired ones), and fail (kept
by opt-in as failure entries). The clock is set by the test, one reading per turn, so that
time (and with it LRU order and expiry) depends only on the script, not on how often the
runtime happens to read the clock.

An independent model of the contract checks which refs are held after every turn: least
recently used first by use order (a read counts as a use), the turn's own new entry never
evicted for itself, a body larger than ``max_bytes`` never stored (and evicting nothing),
an entry whose ``created_at + ttl_ms`` has come dropped at the next write or read.
"""

from __future__ import annotations

import json
import random
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import agrun
from agrun import FunctionSkill, SkillContext, SkillHelpers
from agrun.content import ContentRefNotFound
from agrun.ports import Storage
from agrun.storage import MemoryStorage
from agrun.testing import SequentialIds

SESSION = "stress"
TURNS = 90
LIMITS = [
    pytest.param({"max_entries": 4, "max_bytes": 4_000}, id="entries"),
    pytest.param({"max_bytes": 700}, id="bytes"),
    pytest.param({"max_entries": 6, "max_bytes": 900, "ttl_ms": 1_500}, id="entries-bytes-ttl"),
]
DEFAULT_LIMITS = {"max_entries": 64, "max_bytes": 1_000_000, "ttl_ms": None}


class ManualClock:
    """A clock the test sets: every reading within a turn is the same instant."""

    def __init__(self) -> None:
        self.now = 1_700_000_000_000

    def now_ms(self) -> int:
        return self.now


# -- the turns -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One scripted turn: how far the clock moves first, the skill, and its input (for
    ``read``, the index of the earlier turn whose reply it reads)."""

    advance_ms: int
    skill: str
    input: str


def script(seed: int, turns: int, max_bytes: int) -> list[Turn]:
    """Seeded turns: mostly writes of 10-300 bytes, some reads of earlier replies, some
    failures, and now and then a body too large for the store."""
    rng = random.Random(seed)
    out: list[Turn] = []
    for n in range(turns):
        advance = rng.choice((1, 7, 90, 400, 1_100))
        roll = rng.random()
        if roll < 0.2 and n:
            out.append(Turn(advance, "read", str(rng.randrange(n))))
        elif roll < 0.3:
            out.append(Turn(advance, "fail", f"turn {n} failed " + "x" * rng.randint(0, 200)))
        elif roll < 0.35:
            out.append(Turn(advance, "write", f"text:{max_bytes + rng.randint(1, 50)}"))
        else:
            kind = rng.choice(("text", "list", "object"))
            out.append(Turn(advance, "write", f"{kind}:{rng.randint(10, 300)}"))
    return out


def body(kind: str, size: int) -> Any:
    """A body of about ``size`` bytes, of the kind asked for."""
    if kind == "list":
        return ["item"] * max(1, size // 7)
    if kind == "object":
        return {"key": "v" * size, "n": size}
    return "t" * size


def write(input: str, context: SkillContext, helpers: SkillHelpers) -> Any:
    kind, size = input.split(":")
    return body(kind, int(size))


def read(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
    try:
        return f"read {context.content(input).bytes} bytes"
    except ContentRefNotFound:
        return "missing"


def fail(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
    raise RuntimeError(input)


SKILLS = [FunctionSkill("write", write), FunctionSkill("read", read), FunctionSkill("fail", fail)]


# -- the contract, modelled independently ----------------------------------------------------


@dataclass
class StoreModel:
    """The refs the store must hold, by the contract (not by the store's own code)."""

    max_entries: int
    max_bytes: int
    ttl_ms: int | None
    # ref -> (bytes, created_at), least recently used first.
    held: OrderedDict[str, tuple[int, int]] = field(default_factory=OrderedDict)
    dropped: int = 0
    missed: int = 0

    def _expire(self, now: int, keep: str | None = None) -> None:
        if self.ttl_ms is None:
            return
        for ref, (_, created) in list(self.held.items()):
            if ref != keep and created + self.ttl_ms <= now:
                del self.held[ref]
                self.dropped += 1

    def read(self, ref: str, now: int) -> bool:
        self._expire(now)
        if ref not in self.held:
            self.missed += 1
            return False
        self.held.move_to_end(ref)
        return True

    def write(self, ref: str, size: int, now: int) -> None:
        if size > self.max_bytes:
            return
        self.held[ref] = (size, now)
        self._expire(now, keep=ref)
        while len(self.held) > self.max_entries or self._bytes() > self.max_bytes:
            oldest = next(r for r in self.held if r != ref)
            del self.held[oldest]
            self.dropped += 1

    def _bytes(self) -> int:
        return sum(size for size, _ in self.held.values())


def json_bytes(value: Any) -> int:
    """What the contract counts for a body: the UTF-8 bytes of its JSON."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return len(text.encode("utf-8"))


# -- playing a script --------------------------------------------------------------------------

Opener = Callable[[], Awaitable[Storage]]


async def memory_opener() -> Opener:
    storage = MemoryStorage()

    async def reopen() -> Storage:
        return storage  # the same process memory: a reload finds what the last runtime left

    return reopen


def sqlite_opener(path: Path) -> Opener:
    from agrun.adapters.sqlite import SqliteStorage  # absent in Pyodide

    opened: list[Any] = []

    async def reopen() -> Storage:
        if opened:
            await opened[-1].close()
        opened.append(SqliteStorage(path / "stress.sqlite3"))
        return opened[-1]

    return reopen


@dataclass
class Played:
    """What a script left: the refs held after each turn, and the entries at the end."""

    held: list[tuple[str, ...]] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    dropped: int = 0
    """Entries evicted or expired on the way."""
    missed: int = 0
    """Reads of a ref that was no longer held."""


async def play(
    limits: dict[str, Any],
    seed: int,
    reopen: Opener,
    *,
    reload_every: int | None,
    storage_every_turn: bool = True,
) -> Played:
    """Run the seeded script on a runtime reopened every ``reload_every`` turns, checking
    the limits and the contract after every turn (storage too, or else at each reload and
    at the end: reading a whole session back costs more than the turn)."""
    bounds = DEFAULT_LIMITS | limits
    options = dict(limits, keep_failures=["skill_error"])
    clock, ids = ManualClock(), SequentialIds()

    async def open_runtime() -> tuple[agrun.Runtime, Storage]:
        storage = await reopen()
        runtime = agrun.create_runtime(
            clock=clock,
            ids=ids,
            storage=storage,
            session_id=SESSION,
            skills=SKILLS,
            content_store=options,
        )
        await runtime.open()
        return runtime, storage

    runtime, storage = await open_runtime()
    model = StoreModel(bounds["max_entries"], bounds["max_bytes"], bounds["ttl_ms"])
    played, refs = Played(), []
    for n, turn in enumerate(script(seed, TURNS, bounds["max_bytes"])):
        if reload_every and n and n % reload_every == 0:
            runtime, storage = await open_runtime()
            await check(runtime, storage, bounds, model)  # resumed exactly what was kept
        clock.now += turn.advance_ms
        target = refs[int(turn.input)] if turn.skill == "read" else turn.input
        result = await runtime.run(target, skill=turn.skill)
        refs.append(f"content:{result.state.run_id}")
        if turn.skill == "read":
            assert (result.output != "missing") == model.read(target, clock.now)
        # A failed turn keeps its error message (keep_failures), a successful one its output.
        kept = result.output if result.error is None else result.error.message
        model.write(refs[-1], json_bytes(kept), clock.now)
        await check(runtime, storage if storage_every_turn else None, bounds, model)
        played.held.append(tuple(sorted(runtime._session.content.entries)))  # type: ignore[union-attr]
    await check(runtime, storage, bounds, model)
    store = runtime._session.content
    assert store is not None
    played.entries = [entry.to_wire() for _, entry in sorted(store.entries.items())]
    played.dropped, played.missed = model.dropped, model.missed
    return played


async def check(
    runtime: agrun.Runtime, storage: Storage | None, bounds: dict[str, Any], model: StoreModel
) -> None:
    """The store within its limits in memory and in storage, the two the same, and holding
    exactly what the contract says."""
    store = runtime._session.content
    assert store is not None
    held = {ref: entry.to_wire() for ref, entry in store.entries.items()}
    assert len(held) <= bounds["max_entries"]
    assert store.bytes_held <= bounds["max_bytes"]
    assert set(held) == set(model.held)
    if storage is None:
        return
    snapshot = await storage.load_session(SESSION, all_events=False)
    assert snapshot is not None
    stored = {entry["ref"]: entry for entry in snapshot.content_entries}
    assert len(stored) <= bounds["max_entries"]
    assert sum(entry["bytes"] for entry in stored.values()) <= bounds["max_bytes"]
    assert stored == held


# -- the tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("limits", LIMITS)
async def test_a_reloaded_store_stays_within_its_limits_in_memory_and_storage(
    limits: dict[str, Any],
) -> None:
    played = await play(limits, 5, await memory_opener(), reload_every=4)
    # The script really pressed on the limits: entries were evicted and reads missed.
    assert played.dropped > 0 and played.missed > 0


@pytest.mark.parametrize("limits", LIMITS)
async def test_eviction_is_the_same_with_and_without_reloads(limits: dict[str, Any]) -> None:
    steady = await play(limits, 7, await memory_opener(), reload_every=None,
                        storage_every_turn=False)  # fmt: skip
    reloaded = await play(limits, 7, await memory_opener(), reload_every=3,
                          storage_every_turn=False)  # fmt: skip
    assert reloaded.held == steady.held
    assert reloaded.entries == steady.entries


@pytest.mark.cpython_only
@pytest.mark.parametrize("limits", LIMITS)
async def test_sqlite_keeps_the_same_store_as_memory_across_reopens(
    limits: dict[str, Any], tmp_path: Path
) -> None:
    in_memory = await play(limits, 3, await memory_opener(), reload_every=4,
                           storage_every_turn=False)  # fmt: skip
    on_disk = await play(limits, 3, sqlite_opener(tmp_path), reload_every=4)
    assert on_disk.held == in_memory.held
    assert on_disk.entries == in_memory.entries
