"""A stored body stays what was said, in the page (spec 002, issue 18): a JS skill's
``context.content(ref)`` and the host's ``rt.content(ref)`` refuse every write, on the main
thread and in a worker; what IndexedDB keeps and a reload serves is the body as stored, and
a row changed in IndexedDB behind the runtime's back is reported and never served."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from conftest import boot_runtime

SKILLS = """[
  { name: 'rows', description: 'Answer rows.', run: () => ({ rows: [1, 2], meta: { unit: 'km' } }) },
  { name: 'change', description: 'Try to change a stored body.',
    async run(input, context) {
      'use strict';
      const entry = await context.content(input);
      const tries = {
        push: () => entry.body.rows.push(99),
        index: () => { entry.body.rows[0] = 7; },
        nested: () => { entry.body.meta.unit = 'mi'; },
        add: () => { entry.body.added = 1; },
        remove: () => { delete entry.body.rows; },
        digest: () => { entry.digest = 'sha256:0'; },
      };
      const refused = {};
      for (const [name, attempt] of Object.entries(tries)) {
        try { attempt(); refused[name] = 'allowed'; } catch (error) { refused[name] = error.name; }
      }
      const mine = structuredClone(entry.body);
      mine.rows.push(99);
      return { refused, mine };
    } },
  { name: 'rewrite', description: 'Change a stored body, uncaught.',
    async run(input, context) { (await context.content(input)).body.rows.push(99); return 'rewritten'; } },
]"""

# Turns, then the host's own attempt, then what IndexedDB holds (a store of its own).
SCRIPT = """async ([db]) => {
    const first = await rt.run('rows please', { skill: 'rows' });
    const ref = first.messages.at(-1).contentRef;
    const digest = first.messages.at(-1).contentDigest;
    const changed = await rt.run(ref, { skill: 'change' });
    const rewrite = await rt.run(ref, { skill: 'rewrite' });
    await rt.idle();  // its commit follows the answer
    const entry = rt.content(ref);
    let host;
    try { entry.body.rows.push(5); host = 'allowed'; } catch (error) { host = error.name; }
    const store = (await import('/storage.js')).createSessionStore({ dbName: db });
    const [row] = (await store.loadSession('integrity')).contentEntries.filter((e) => e.ref === ref);
    store.close?.();
    return {
        ref, digest, host,
        changed: changed.output,
        rewrite: [rewrite.state.status, rewrite.state.error?.code ?? null],
        served: entry.body,
        stored: [row.body, row.digest],
    };
}"""

RELOADED = """async ([ref]) => {
    let missing = null;
    let body = null;
    try { body = rt.content(ref).body; } catch (error) { missing = error.code; }
    return { body, missing, digest: missing ? null : rt.content(ref).digest,
             unreadable: rt.storageStatus().unreadable };
}"""

# Change the stored row's body in IndexedDB directly, keeping its digest.
TAMPER = """async ([db, ref]) => {
    const open = indexedDB.open(db);
    const idb = await new Promise((resolve, reject) => {
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
    });
    const tx = idb.transaction('content', 'readwrite');
    const content = tx.objectStore('content');
    const row = await new Promise((resolve) => { const r = content.get(['integrity', ref]); r.onsuccess = () => resolve(r.result); });
    row.body.body.rows.push(99);
    content.put(row);
    await new Promise((resolve) => { tx.oncomplete = resolve; });
    idb.close();
}"""


def options(db: str, worker: bool) -> str:
    return (
        f"{{ storage: 'indexeddb', dbName: '{db}', sessionId: 'integrity', "
        f"worker: {'true' if worker else 'false'}, skills: {SKILLS} }}"
    )


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_a_js_skill_cannot_change_a_stored_body(warm_page: Page, worker: bool) -> None:
    page = warm_page
    db = f"e2e-content-integrity-{'worker' if worker else 'page'}"
    boot_runtime(page, options(db, worker))
    seen: dict[str, Any] = page.evaluate(SCRIPT, [db])
    body = {"rows": [1, 2], "meta": {"unit": "km"}}
    assert seen["changed"] == {
        "refused": dict.fromkeys(
            ("push", "index", "nested", "add", "remove", "digest"), "TypeError"
        ),
        "mine": {"rows": [1, 2, 99], "meta": {"unit": "km"}},
    }
    assert seen["rewrite"] == ["failed", "skill_error"]
    assert seen["host"] == "TypeError"
    assert seen["served"] == body
    assert seen["stored"] == [body, seen["digest"]]

    # A reload (a new runtime on the same database) serves the body as it was stored.
    boot_runtime(page, options(db, worker))
    again = page.evaluate(RELOADED, [seen["ref"]])
    assert again == {"body": body, "missing": None, "digest": seen["digest"], "unreadable": []}


def test_a_body_changed_in_indexeddb_is_reported_and_never_served(warm_page: Page) -> None:
    page = warm_page
    db = "e2e-content-integrity-tamper"
    boot_runtime(page, options(db, False))
    ref = page.evaluate(
        "async () => (await rt.run('rows', { skill: 'rows' })).messages.at(-1).contentRef"
    )
    page.evaluate("async () => { await rt.close(); }")
    page.evaluate(TAMPER, [db, ref])
    boot_runtime(page, options(db, False))
    after = page.evaluate(RELOADED, [ref])
    assert after["missing"] == "content_ref_not_found" and after["body"] is None
    [damage] = after["unreadable"]
    assert ref in damage and "content_digest_mismatch" in damage
