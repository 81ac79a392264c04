"""The content store under stress in the page (issue 13): a seeded run of turns through
createRuntime with IndexedDB, small limits and page reloads along the way, checked after
every turn against what IndexedDB holds and what the runtime reports it holds in memory.

The model is a page provider: ``write N SIZE`` answers a body of SIZE characters, ``read
REF`` calls ``read_content`` and answers whether it found it. Each model call's
``ModelCallStarted`` event carries the store's counters (entries, bytes held) as the turn
starts: the memory side, which must equal what IndexedDB held after the turn before. Which
refs are held is checked against least-recently-used order by use (reads count), the same
contract tests/test_content_stress.py models with a clock of its own; here the clock is the
browser's, so turns are spaced a few milliseconds apart to keep their times distinct.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from typing import Any

from playwright.sync_api import Page

from conftest import boot_runtime

MAX_ENTRIES = 5
MAX_BYTES = 900
TURNS = 30
# A reload boots Pyodide again (the most of this test's time): two, at different phases.
RELOADS = (8, 19)
SESSION, DB = "stress", "e2e-content-stress"

PROVIDER = """async (request) => {
    const last = request.messages.at(-1);
    if (last.role === 'tool') return { text: last.content.startsWith('error') ? 'missing' : 'found' };
    const said = [...request.messages].reverse().find((m) => m.role === 'user').content;
    const [op, arg, size] = said.split(' ');
    if (op === 'read') {
        // read_content is offered only while the store holds something.
        if (!request.tools.some((t) => t.function.name === 'read_content')) return { text: 'missing' };
        return { toolCalls: [{ id: 'read', name: 'read_content', arguments: { ref: arg } }] };
    }
    return { text: ('body ' + arg + ' ').repeat(Math.ceil(Number(size) / 6)).slice(0, Number(size)) };
}"""
OPTIONS = (
    f"{{ storage: 'indexeddb', dbName: '{DB}', sessionId: '{SESSION}', "
    f"provider: {PROVIDER}, memoryExtraction: 'rules', "
    "onEvent: (event) => window.events.push(event), "
    f"contentStore: {{ maxEntries: {MAX_ENTRIES}, maxBytes: {MAX_BYTES} }} }}"
)

# One turn, then what IndexedDB holds (read through a store of its own on the same database).
TURN = """async ([input, db, sid]) => {
    await new Promise((resolve) => setTimeout(resolve, 3));
    window.events = [];
    const result = await rt.run(input);
    await rt.idle();  // the turn is committed after its answer: read the store once it is
    const started = window.events.find((e) => e.kind === 'ModelCallStarted');
    window.idb ??= (await import('/storage.js')).createSessionStore({ dbName: db });
    const snapshot = await window.idb.loadSession(sid);
    return {
        status: result.state.status,
        output: result.output,
        ref: `content:${result.state.runId}`,
        kept: result.messages.at(-1).contentRef ?? null,
        memory: started.contentStore,
        stored: snapshot.contentEntries.map((e) => [e.ref, e.bytes]),
    };
}"""


class Lru:
    """The refs the store must hold: least recently used goes first; a body larger than
    the store is never kept; the turn's own reply is never evicted for itself."""

    def __init__(self) -> None:
        self.held: OrderedDict[str, int] = OrderedDict()

    def read(self, ref: str) -> bool:
        if ref in self.held:
            self.held.move_to_end(ref)
            return True
        return False

    def write(self, ref: str, size: int) -> None:
        if size > MAX_BYTES:
            return
        self.held[ref] = size
        while len(self.held) > MAX_ENTRIES or sum(self.held.values()) > MAX_BYTES:
            del self.held[next(r for r in self.held if r != ref)]


def script(seed: int) -> list[tuple[str, int]]:
    """Seeded turns: ("write", size) or ("read", index of an earlier turn)."""
    rng = random.Random(seed)
    turns: list[tuple[str, int]] = []
    for n in range(TURNS):
        roll = rng.random()
        if roll < 0.3 and n:
            turns.append(("read", rng.randrange(n)))
        elif roll < 0.37:
            turns.append(("write", MAX_BYTES + rng.randint(1, 100)))
        else:
            turns.append(("write", rng.randint(40, 320)))
    return turns


def test_the_store_stays_within_its_limits_across_page_reloads(page: Page) -> None:
    boot_runtime(page, OPTIONS)
    model, refs = Lru(), []
    previous: list[Any] | None = None
    reads: list[bool] = []
    for n, (op, value) in enumerate(script(11)):
        if n in RELOADS:
            page.reload()
            boot_runtime(page, OPTIONS)
        text = f"read {refs[value]}" if op == "read" else f"write {n} {value}"
        turn = page.evaluate(TURN, [text, DB, SESSION])
        assert turn["status"] == "succeeded"
        # The reply carries its ref exactly when it was kept (a body over max_bytes is not).
        assert turn["kept"] == (turn["ref"] if len(turn["output"]) + 2 <= MAX_BYTES else None)
        # The memory side as the turn started equals what storage held after the last one.
        memory = turn["memory"]
        assert memory["entries"] <= MAX_ENTRIES and memory["bytesHeld"] <= MAX_BYTES
        if previous is not None:
            assert memory["entries"] == len(previous)
            assert memory["bytesHeld"] == sum(size for _, size in previous)
        if op == "read":
            reads.append(turn["output"] == "found")
            assert reads[-1] == model.read(refs[value])
        refs.append(turn["ref"])
        # A text body's JSON is the text in quotes: two bytes more.
        model.write(turn["ref"], len(turn["output"]) + 2)
        # Run traces (issue 22) persist as content records too, in a store of their own.
        stored = [row for row in turn["stored"] if not row[0].startswith("trace:")]
        assert len(stored) <= MAX_ENTRIES and sum(size for _, size in stored) <= MAX_BYTES
        assert sorted(ref for ref, _ in stored) == sorted(model.held)
        previous = stored
    # The script reached both sides: reads that moved an entry up, reads of evicted ones.
    assert set(reads) == {True, False}
