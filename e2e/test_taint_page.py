"""Secrets never leave the page (issue 19.3), in page and worker mode: secrets of each kind
are planted in the person's input, a tool call's arguments, a tool's result, the model's
reply, a skill's thrown error, a provider's thrown error, a `remember:` note and a skill's
appendMemory; then every IndexedDB object store of every database, the export, the events,
what the worker posts to the page, what streamed to onToken, Cache Storage and the console
are read: none holds one.

What the page posts to the worker is left out on purpose: it is the person's input, which the
redactor (in Python, in the worker) masks at the runtime's door.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from conftest import boot_runtime

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from planted_secrets import PLANTED, hits

ALL = " and ".join(text for text, _ in PLANTED.values())

# Every message a worker posts to the page, as text, from before agrun loads.
RECORD_WORKER_TRAFFIC = """
window.__workerTraffic = [];
const PageWorker = window.Worker;
window.Worker = class extends PageWorker {
  constructor(...args) {
    super(...args);
    this.addEventListener('message', (event) => {
      try { window.__workerTraffic.push(JSON.stringify(event.data)); }
      catch { window.__workerTraffic.push(String(event.data)); }
    });
  }
};
"""

# Replies stream in pieces of five characters, a few milliseconds apart, as a model's do
# (issue 19.3: what a turn streams to onToken is masked as its kept reply is). Pieces that
# reach the runtime before it looks go on as one (adapters/pyodide/provider.py): given in
# one go, or a task apart to a busy worker, the reply would stream in too few pieces.
PROVIDER = """async (request, { onToken } = {}) => {
    const apart = () => new Promise((resolve) => setTimeout(resolve, 2));
    const streamed = async (text) => {
      for (let at = 0; onToken && at < text.length; at += 5) {
        onToken(text.slice(at, at + 5));
        await apart();
      }
      return { text };
    };
    const said = request.messages.findLast((m) => m.role === 'user').content;
    if (request.responseFormat) return { text: JSON.stringify({ facts: ['My key is ' + SECRETS], preferences: [], decisions: [] }) };
    if (request.messages.at(-1).role === 'tool') return streamed('Done. Here it is again: ' + SECRETS);
    if (said.includes('look')) return { toolCalls: [{ id: 'l1', name: 'lookup', arguments: { input: SECRETS } }] };
    if (said.includes('break')) return { toolCalls: [{ id: 'b1', name: 'broken', arguments: { input: SECRETS } }] };
    if (said.includes('fail')) throw new Error('upstream said: bad credentials ' + SECRETS);
    return streamed('Noted. ' + SECRETS);
}"""

SKILLS = """[
  { name: 'lookup', description: 'Looks a thing up.',
    run(input, context, helpers) {
      helpers.appendMemory({ kind: 'fact', text: 'the vault holds ' + SECRETS });
      return 'found: ' + SECRETS;
    } },
  { name: 'broken', description: 'Always fails.',
    run() { throw new Error('auth failed for ' + SECRETS); } },
]"""

TALK = """async () => {
    const statuses = [];
    for (const said of ['please look up ' + SECRETS, 'now break it', 'then fail',
                        'remember: ' + SECRETS, 'my secrets are ' + SECRETS]) {
      const result = await rt.run(said, { onToken: (text) => window.tokens.push(text) });
      statuses.push(result.state.status);
      await rt.idle();
    }
    const exported = await rt.exportSession();
    const stores = {};
    for (const { name } of await indexedDB.databases()) {
      const db = await new Promise((resolve, reject) => {
        const open = indexedDB.open(name);
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
      });
      for (const store of db.objectStoreNames) {
        const rows = await new Promise((resolve, reject) => {
          const get = db.transaction(store).objectStore(store).getAll();
          get.onsuccess = () => resolve(get.result);
          get.onerror = () => reject(get.error);
        });
        stores[name + '/' + store] = JSON.stringify(rows);
      }
      db.close();
    }
    const cached = [];
    for (const key of await caches.keys()) {
      const cache = await caches.open(key);
      for (const request of await cache.keys()) {
        const response = await cache.match(request);
        if (/text|json|javascript/.test(response.headers.get('content-type') ?? '')) cached.push(await response.text());
      }
    }
    return { statuses, exported, stores, cached: cached.join('\\n'),
             tokens: window.tokens, events: JSON.stringify(window.events), traffic: (window.__workerTraffic ?? []).join('\\n'),
             history: JSON.stringify(rt.history()), state: JSON.stringify(rt.state()),
             memory: JSON.stringify(rt.memory()), continuity: JSON.stringify([rt.sessionMemory(), rt.inquiry(), rt.globalMemory()]) };
}"""


@pytest.mark.parametrize("mode", ["page", "worker"])
def test_no_planted_secret_is_stored_exported_posted_cached_or_logged(
    page: Page, mode: str
) -> None:
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.add_init_script(
        f"window.SECRETS = {json.dumps(ALL)}; window.tokens = [];\n{RECORD_WORKER_TRAFFIC}"
    )
    worker = "worker: true, " if mode == "worker" else ""
    boot_runtime(
        page,
        f"""{{ {worker}provider: {PROVIDER}, skills: {SKILLS}, storage: 'indexeddb',
              sessionId: 'taint', dbName: 'e2e-taint', onEvent: (e) => window.events.push(e) }}""",
    )
    seen: dict[str, Any] = page.evaluate(TALK)
    assert seen["statuses"] == ["succeeded", "succeeded", "failed", "succeeded", "succeeded"]
    if mode == "worker":
        assert seen["traffic"], "the worker's messages were recorded"
    assert len(seen["tokens"]) > 3, "the replies streamed"
    assert len(seen["stores"]) >= 5, "every object store was read"
    places = {
        "console": "\n".join(console),
        **{f"indexeddb {name}": rows for name, rows in seen["stores"].items()},
        "streamed": "".join(seen["tokens"]),
        **{key: seen[key] for key in ("exported", "cached", "events", "traffic", "history")},
        **{key: seen[key] for key in ("state", "memory", "continuity")},
    }
    assert {place: hits(text) for place, text in places.items() if hits(text)} == {}
    # The planted errors really came through, masked.
    assert "bad credentials" in seen["events"] and "auth failed for" in seen["history"]
