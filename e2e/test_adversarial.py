"""Tried from outside, as a hostile page or an unlucky user would (issue 8): imports the
runtime could not read back, damaged rows, deep nesting, a database deleted under the page,
one tab degrading while another does not, transactions aborted mid-write, skills that throw
anything, a read-only state that must stay readable, re-entrant calls and odd options.
Each test failed before its fix; docs/storage.md has the table of probes."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page

from conftest import PageProblems, boot_runtime

NOTE = """{ name: 'note', description: 'remembers', applies: (i) => i.startsWith('note'),
  run: async (input, context, helpers) => { helpers.appendMemory({ text: input }); return 'noted ' + input; } }"""


def idb_runtime(page: Page, db: str, extra: str = "") -> None:
    """`window.rt` on IndexedDB database `db`, session 's', recording degrade/restore/events."""
    if not page.url.endswith("/blank.html"):
        page.goto("/blank.html")
    page.evaluate(
        f"""async () => {{
            const agrun = await import('/agrun.js');
            window.agrun = agrun;
            window.rt?.close();
            window.degraded = []; window.restored = []; window.events = [];
            window.rt = await agrun.createRuntime({{
                sessionId: 's', dbName: {json.dumps(db)}, skills: [{NOTE}],
                onStorageDegraded: (e) => degraded.push(e.reason),
                onStorageRestored: (e) => restored.push(e.merged),
                onEvent: (e) => events.push(e.kind), {extra}
            }});
        }}"""
    )


def run(page: Page, text: str) -> Any:
    return page.evaluate("(text) => rt.run(text)", text)


def said(page: Page) -> list[str]:
    return page.evaluate(
        "() => rt.history().filter((m) => m.role === 'user').map((m) => m.content)"
    )


# -- 1, 2: imports the runtime could not read back, and sessions damaged on disk -------------

EDITS = {
    "message with an extra field": "s.turns[0].messages[0].mood = 'happy'",
    "message with a __proto__ key": (
        "Object.defineProperty(s.turns[0].messages[0], '__proto__', "
        "{ value: { x: 1 }, enumerable: true })"
    ),
    "message with role wizard": "s.turns[0].messages[0].role = 'wizard'",
    "message with numeric content": "s.turns[0].messages[0].content = 42",
    "message with no id": "delete s.turns[0].messages[0].id",
    "memory entry with an extra field": "s.turns[0].memoryEntries[0].extra = 1",
    "memory entry with no text": "delete s.turns[0].memoryEntries[0].text",
    "memory entry from an alien source": "s.turns[0].memoryEntries[0].source = 'alien'",
    "lastRun of the wrong shape": "s.lastRun = { runId: 3 }",
}


@pytest.mark.parametrize("edit", EDITS.values(), ids=list(EDITS))
def test_an_import_the_runtime_cannot_read_is_refused_in_javascript_and_python(
    warm_page: Page, edit: str
) -> None:
    page = warm_page
    boot_runtime(page, f"{{ skills: [{NOTE}] }}")
    result = page.evaluate(
        f"""async () => {{
            await rt.run('note one');
            const good = await rt.exportSession();
            const data = JSON.parse(good);
            const s = data.session;
            {edit};
            const bad = JSON.stringify(data);
            const before = await rt.exportSession();
            const refusal = async (call) => {{
                try {{ await call(); return 'accepted'; }} catch (e) {{ return e.code; }}
            }};
            const byRuntime = await refusal(() => rt.importSession(bad, {{ replace: true }}));
            const after = await rt.exportSession();
            // The page's own check, with the schemas of the runtime's models, alone:
            const records = await import('/storage/records.js');
            const byJs = await refusal(async () => records.parseExport(bad, {{ records: true }}));
            return {{ byRuntime, byJs, same: before === after,
                      next: (await rt.run('note two')).state.status }};
        }}"""
    )
    assert result == {
        "byRuntime": "import_rejected",
        "byJs": "import_rejected",
        "same": True,
        "next": "succeeded",
    }


def test_a_session_damaged_on_disk_opens_reports_and_is_repaired_by_an_import(
    page: Page,
) -> None:
    idb_runtime(page, "adv-damaged")
    run(page, "note one")
    run(page, "note two")
    good = page.evaluate("() => rt.exportSession()")
    # An older writer's bug: rows of the wrong shape, written straight into IndexedDB.
    page.evaluate(
        """async () => {
            rt.close();
            const db = await new Promise((ok, no) => {
                const r = indexedDB.open('adv-damaged'); r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error);
            });
            const tx = db.transaction(['messages', 'memoryEntries', 'sessions'], 'readwrite');
            const row = await new Promise((ok) => { const r = tx.objectStore('messages').get(['s', 1]); r.onsuccess = () => ok(r.result); });
            row.items[0].role = 'wizard';
            tx.objectStore('messages').put(row);
            tx.objectStore('memoryEntries').put({ sessionId: 's', seq: 2, items: [{ id: 'broken' }] });
            const head = await new Promise((ok) => { const r = tx.objectStore('sessions').get('s'); r.onsuccess = () => ok(r.result); });
            head.lastRun = { runId: 7 };
            tx.objectStore('sessions').put(head);
            await new Promise((ok) => { tx.oncomplete = ok; });
            db.close();
        }"""
    )
    idb_runtime(page, "adv-damaged")
    opened = page.evaluate(
        """() => ({ said: rt.history().map((m) => m.content), status: rt.storageStatus(),
                    events: events, lastRun: rt.state().lastRun })"""
    )
    assert opened["said"] == ["noted note one", "note two", "noted note two"]
    assert len(opened["status"]["unreadable"]) == 3
    assert "SessionDamaged" in opened["events"] and opened["lastRun"] is None
    assert run(page, "note three")["state"]["status"] == "succeeded"
    page.evaluate("(text) => rt.importSession(text, { replace: true })", good)
    repaired = page.evaluate("() => ({ said: rt.history().length, status: rt.storageStatus() })")
    assert repaired == {"said": 4, "status": {**repaired["status"], "unreadable": []}}


# -- 3: deep nesting, and a lock that is released whatever happens inside it ------------------


def test_deep_nesting_is_refused_at_once_and_leaves_the_lock_free(page: Page) -> None:
    idb_runtime(page, "adv-deep")
    run(page, "note one")
    result = page.evaluate(
        """async () => {
            const data = JSON.parse(await rt.exportSession());
            data.session.sessionMemory = { placeholder: true };
            const deep = '{"a":'.repeat(4000) + '1' + '}'.repeat(4000);
            const text = JSON.stringify(data).replace('{"placeholder":true}', deep);
            let code;
            try { await rt.importSession(text, { replace: true }); } catch (e) { code = e.code; }
            const held = (await navigator.locks.query()).held.map((l) => l.name);
            return { code, held, next: (await rt.run('note two')).state.status };
        }"""
    )
    assert result == {"code": "import_rejected", "held": [], "next": "succeeded"}


def test_an_interpreter_killed_inside_the_lock_releases_it_and_the_next_runtime_boots(
    page: Page, problems: PageProblems
) -> None:
    problems.console_errors_expected = True  # Pyodide reports its own fatal error
    idb_runtime(
        page,
        "adv-killed",
        """skills: [{ name: 'kill', description: 'kills the interpreter', applies: (i) => i === 'kill',
             run: async () => { const { bootPyodide, resolveIndexURL } = await import('/boot/boot.js');
                                const py = await bootPyodide(resolveIndexURL(), () => {});
                                try { py._api.fatal_error(new Error('killed by the test')); } catch {} } }]""",
    )
    result = page.evaluate(
        """async () => {
            const settled = await rt.run('kill').then(() => 'resolved', (e) => e.code);
            const held = (await navigator.locks.query()).held.map((l) => l.name);
            const again = await agrun.createRuntime({ storage: 'memory' });
            return { settled, held, next: (await again.run('hello')).output };
        }"""
    )
    assert result == {"settled": "interpreter_failed", "held": [], "next": "echo: hello"}


# -- 4, 5: a database deleted under a live page; one tab degraded while another is not -------


def test_a_database_deleted_under_a_live_page_keeps_the_session_and_tells_the_page(
    context: BrowserContext, page: Page
) -> None:
    idb_runtime(page, "adv-deleted")
    for n in (1, 2, 3):
        run(page, f"note t{n}")
    other = context.new_page()
    other.goto("/blank.html")
    other.evaluate(
        """() => new Promise((ok, no) => {
            const r = indexedDB.deleteDatabase('adv-deleted'); r.onsuccess = ok; r.onerror = () => no(r.error);
        })"""
    )
    run(page, "note t4")
    run(page, "note t5")
    assert said(page) == ["note t1", "note t2", "note t3", "note t4", "note t5"]
    state = page.evaluate(
        "() => ({ degraded, status: rt.storageStatus(), memory: rt.memory().length })"
    )
    assert state["degraded"] == ["DatabaseDeleted"]
    assert state["status"]["degraded"] is True and state["status"]["unsynced"] == 2
    assert state["memory"] == 10
    # The deleted database was not silently started again from turn 4.
    names = other.evaluate("async () => (await indexedDB.databases()).map((d) => d.name)")
    assert "adv-deleted" not in names


def test_a_tab_that_degrades_merges_its_turns_back_and_no_tab_loses_any(
    context: BrowserContext, page: Page
) -> None:
    idb_runtime(page, "adv-split")
    run(page, "note A1")
    b = context.new_page()
    idb_runtime(b, "adv-split")
    run(b, "note B1")
    # Tab A's IndexedDB breaks for a while (fatal both times it is tried); tab B's does not.
    page.evaluate(
        """() => {
            window.realTransaction = IDBDatabase.prototype.transaction;
            IDBDatabase.prototype.transaction = function () {
                throw new DOMException('injected by the test', 'InvalidStateError');
            };
        }"""
    )
    run(page, "note A2")
    run(b, "note B2")
    run(page, "note A3")
    run(b, "note B3")
    assert page.evaluate("() => [degraded, rt.storageStatus().unsynced]") == [
        ["InvalidStateError"],
        2,
    ]
    page.evaluate("() => { IDBDatabase.prototype.transaction = window.realTransaction; }")
    time.sleep(2.2)  # the store tries the database again at most every 2 s
    run(page, "note A4")
    assert page.evaluate("() => [restored, rt.storageStatus().degraded]") == [[2], False]
    expected = {"note A1", "note B1", "note A2", "note A3", "note B2", "note B3", "note A4"}
    assert set(said(page)) == expected
    run(b, "note B4")
    assert set(said(b)) == expected | {"note B4"}
    b.reload()
    idb_runtime(b, "adv-split")
    assert sorted(said(b)) == sorted(expected | {"note B4"})


# -- 6: a transaction aborted while the commit is still writing ------------------------------


def test_a_transaction_aborted_mid_commit_is_retried_not_fatal_and_seqs_stay_unique(
    page: Page,
) -> None:
    idb_runtime(page, "adv-abort")
    run(page, "note one")
    page.evaluate(
        """() => {
            const put = IDBObjectStore.prototype.put;
            let left = 3;
            IDBObjectStore.prototype.put = function (...args) {
                if (left > 0 && this.name === 'turns') { left -= 1; this.transaction.abort(); }
                return put.apply(this, args);
            };
        }"""
    )
    for text in ("note two", "note three", "note four"):
        assert run(page, text)["state"]["status"] == "succeeded"
    assert page.evaluate("() => [degraded, rt.storageStatus().degraded]") == [[], False]
    page.reload()
    idb_runtime(page, "adv-abort")
    assert said(page) == ["note one", "note two", "note three", "note four"]
    seqs = page.evaluate(
        """async () => JSON.parse(await rt.exportSession()).session.turns
                .flatMap((t) => t.memoryEntries.map((e) => e.seq))"""
    )
    assert seqs == list(range(1, len(seqs) + 1))


# -- 7, 8: skills that throw anything; a state every read of which works ---------------------

THROWN = {
    "a string": "throw 'oops'",
    "a number": "throw 42",
    "null": "throw null",
    "undefined": "throw undefined",
    "a plain object": "throw { reason: 'no' }",
    "an Error whose message getter throws": (
        "const e = new Error('x'); Object.defineProperty(e, 'message', { get() { throw new Error('nope'); } }); throw e"
    ),
}


@pytest.mark.parametrize("body", THROWN.values(), ids=list(THROWN))
def test_a_skill_that_throws_anything_fails_the_run_at_once_with_a_readable_message(
    warm_page: Page, body: str
) -> None:
    page = warm_page
    boot_runtime(
        page,
        f"""{{ skillTimeoutMs: 20000, skills: [{{ name: 'odd', description: 'throws',
              run: async () => {{ {body}; }} }}] }}""",
    )
    started = time.monotonic()
    result = page.evaluate("() => rt.run('x', { skill: 'odd' })")
    assert time.monotonic() - started < 10
    assert result["state"]["status"] == "failed"
    assert result["error"]["code"] == "skill_error"
    assert result["error"]["message"].startswith("skill 'odd' raised JavaScriptError: ")


def test_a_sparse_array_output_names_the_hole(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(
        page,
        "{ skills: [{ name: 'sparse', description: 'holes', run: () => [1, , 3] }] }",
    )
    result = page.evaluate("() => rt.run('x', { skill: 'sparse' })")
    assert result["error"]["code"] == "output_not_serializable"
    assert "$[1] is a hole in a sparse array" in result["error"]["message"]


def test_every_read_of_context_state_works_and_every_write_is_refused(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(
        page,
        """{ skills: [{ name: 'reader', description: 'reads', run: async (input, context, helpers) => {
              const s = context.state;
              if (s.cycleCount === 1) { helpers.requestCycle('again'); return 'first'; }
              const sloppy = new Function('s', 'try { s.status = "x"; return "written"; } catch (e) { return e.constructor.name; }');
              const refusals = [
                  (() => { try { s.status = 'x'; return 'written'; } catch (e) { return e.constructor.name; } })(),
                  sloppy(s),
                  (() => { try { s.oodae.cycles.push(1); return 'written'; } catch (e) { return e.constructor.name; } })(),
                  (() => { try { delete s.runId; } catch {} return Reflect.has(s, 'runId') ? 'refused' : 'deleted'; })(),
              ];
              return { phase: s.oodae.cycles[0].act.skill, cycles: s.oodae.cycles.length,
                       observation: s.observation.outcome, json: JSON.parse(JSON.stringify(s)).runId === s.runId,
                       spread: Object.keys({ ...s }).includes('oodae'), cloned: structuredClone(s).cycleCount,
                       refusals };
        } }] }""",
    )
    result = page.evaluate("() => rt.run('x', { skill: 'reader' })")
    assert result["output"] == {
        "phase": "reader",
        "cycles": 2,
        "observation": "succeeded",
        "json": True,
        "spread": True,
        "cloned": 2,
        "refusals": ["TypeError", "TypeError", "TypeError", "refused"],
    }


# -- 9, 10: re-entrant calls and options that used to pass the checks -------------------------


def test_a_skill_calling_its_own_runtime_gets_the_reentrancy_error_at_once(
    warm_page: Page,
) -> None:
    page = warm_page
    boot_runtime(
        page,
        """{ skillTimeoutMs: 20000, skills: [{ name: 'inner', description: 'calls back in',
              run: async () => {
                  const codes = [];
                  for (const call of [() => rt.run('inner'), () => rt.exportSession(), () => rt.importSession('{}')]) {
                      try { await call(); codes.push('ok'); } catch (e) { codes.push(e.code); }
                  }
                  return codes;
              } }] }""",
    )
    started = time.monotonic()
    result = page.evaluate(
        "async () => [await rt.run('outer', { skill: 'inner' }), rt.history().length]"
    )
    assert time.monotonic() - started < 10
    assert result[0]["output"] == ["reentrant_call"] * 3
    assert result[1] == 2  # the outer turn only: nothing of the inner calls was stored


BAD_OPTIONS = {
    "a 300-character sessionId": ("{ sessionId: 's'.repeat(300) }", "'sessionId'"),
    "an empty dbName": ("{ dbName: '' }", "'dbName'"),
    "a store with only commitTurn": (
        "{ storage: { commitTurn: async () => 1 } }",
        "without loadSession, listSessions, sessionInfo",
    ),
    "compressors in Python's spelling (issue 24.6)": (
        "{ compressors: { tool_output: () => [[0, 1]] } }",
        "spells the data type 'toolOutput'",
    ),
    "a content store limit the model does not have (issue 21.5)": (
        "{ storage: 'memory', contentStore: { maxEntry: 3 } }",
        "maxEntry",
    ),
    "a sessionId with a lone surrogate (issue 20.9)": (
        "{ sessionId: 'a\\uD800b' }",
        "'sessionId' holds a lone surrogate",
    ),
}


@pytest.mark.parametrize(("options", "named"), BAD_OPTIONS.values(), ids=list(BAD_OPTIONS))
def test_options_that_used_to_fail_later_are_refused_at_creation(
    warm_page: Page, options: str, named: str
) -> None:
    result = warm_page.evaluate(
        f"""async () => {{
            const before = (await indexedDB.databases()).length;
            const agrun = await import('/agrun.js');
            try {{ await agrun.createRuntime({options}); return 'created'; }}
            catch (e) {{ return {{ name: e.name, message: e.message,
                                   created: (await indexedDB.databases()).length - before }}; }}
        }}"""
    )
    assert result["name"] == "AgrunConfigError" and named in result["message"]
    assert result["created"] == 0


def test_lone_surrogates_are_a_typed_error(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page)
    result = page.evaluate(
        "async () => { try { await rt.run('a\\ud800b'); return 'ran'; } catch (e) { return [e.name, e.code, rt.history().length]; } }"
    )
    assert result == ["AgrunConfigError", "invalid_input", 0]


# -- issue 20.9: typed refusals at the door ----------------------------------------------------

UNKEEPABLE = {
    "a lone surrogate": ("'a\\uD800b'", "$ holds a lone surrogate (U+D800)"),
    "a lone surrogate in a key": ("({ ['k\\uDC00']: 1 })", "$ key holds a lone surrogate"),
    "lists nested 900 deep": (
        "(() => { let v = 'x'; for (let i = 0; i < 900; i++) v = [v]; return v; })()",
        "nests deeper than 32 levels",
    ),
}


@pytest.mark.parametrize(("output", "named"), UNKEEPABLE.values(), ids=list(UNKEEPABLE))
def test_a_skill_output_that_cannot_be_kept_fails_typed_and_keeps_the_persons_words(
    warm_page: Page, output: str, named: str
) -> None:
    page = warm_page
    boot_runtime(
        page, f"{{ skills: [{{ name: 'bad', description: 'odd output', run: () => {output} }}] }}"
    )
    result = page.evaluate(
        """async () => {
            const result = await rt.run('hello', { skill: 'bad' });
            const again = await rt.run('again');
            return { result, again: again.state.status,
                     history: rt.history().map((m) => [m.role, m.content, m.runStatus ?? null]) };
        }"""
    )
    assert result["result"]["error"]["code"] == "output_not_serializable"
    assert named in result["result"]["error"]["message"]
    assert result["again"] == "succeeded"
    assert result["history"][0] == ["user", "hello", "failed"]


def test_a_page_providers_negative_usage_is_a_protocol_error(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(
        page,
        """{ provider: async () => ({ text: 'hi', usage: { promptTokens: -5, completionTokens: 2 } }),
             memoryExtraction: 'rules' }""",
    )
    result = page.evaluate(
        """async () => { const r = await rt.run('hello');
                         return [r.state.status, r.error?.code, r.error?.message,
                                 rt.history().map((m) => m.runStatus ?? null)]; }"""
    )
    assert result[:2] == ["failed", "provider_protocol_error"]
    assert "integers of at least 0" in result[2] and result[3] == ["failed"]


def test_an_import_with_a_wrong_typed_content_entry_is_refused_by_the_store_and_the_runtime(
    warm_page: Page,
) -> None:
    # Accepted before, then reported unreadable when the session opened (issue 20.9).
    page = warm_page
    boot_runtime(
        page,
        "{ storage: 'memory', skills: [{ name: 'rows', description: 'rows', run: () => ({ rows: [1, 2] }) }] }",
    )
    result = page.evaluate(
        """async () => {
            await rt.run('rows', { skill: 'rows' });
            const file = JSON.parse(await rt.exportSession());
            const out = {};
            for (const [field, value] of [['bytes', '4'], ['createdAt', 1.5], ['kind', 3],
                                          ['depth', -1], ['runId', null], ['extra', 1]]) {
                const edited = structuredClone(file);
                edited.session.contentEntries[0][field] = value;
                const text = JSON.stringify(edited);
                const S = await import('/storage/index.js');
                const stores = [S.createMemorySessionStore(), S.createSessionStore({ dbName: 'typed-' + field })];
                out[field] = [];
                for (const store of stores) {
                    try { await store.importSession(text); out[field].push('accepted'); }
                    catch (e) { out[field].push(e.name + ': ' + e.message); }
                    out[field].push((await store.listSessions()).length);
                    await store.close?.();
                }
                try { await rt.importSession(text, { replace: true }); out[field].push('accepted'); }
                catch (e) { out[field].push(e.code); }
            }
            return out;
        }"""
    )
    for field, outcome in result.items():
        assert outcome[0].startswith("ImportRejected") and f"contentEntries.0.{field}" in outcome[0]
        assert outcome[2].startswith("ImportRejected") and outcome[1] == outcome[3] == 0
        assert outcome[4] == "import_rejected", field


# -- 11: costs that must not grow with the session --------------------------------------------


def test_a_turn_start_reads_no_history_and_a_large_input_is_stored_once(warm_page: Page) -> None:
    page = warm_page
    result = page.evaluate(
        """async () => {
            const S = await import('/storage.js');
            const store = S.createMemorySessionStore();
            const calls = {};
            const counted = Object.fromEntries(S.STORE_METHODS.map((m) => [m, async (...a) => {
                calls[m] = (calls[m] ?? 0) + 1; return store[m](...a); }]));
            const agrun = await import('/agrun.js');
            const rt = await agrun.createRuntime({ storage: counted, skills: [
                { name: 'ack', description: 'acknowledges', run: () => 'ok' }] });
            const afterOpen = { ...calls };
            for (let i = 0; i < 30; i += 1) await rt.run('turn ' + i, { skill: 'ack' });
            const big = 'x'.repeat(2_000_000);
            await rt.run(big, { skill: 'ack' });
            const exported = await rt.exportSession();
            rt.close();
            return { afterOpen, calls, exported: exported.length };
        }"""
    )
    calls = result["calls"]
    assert calls.get("listSessions", 0) == 0
    assert calls.get("loadSession", 0) == result["afterOpen"].get("loadSession", 0)
    assert calls["sessionInfo"] == result["afterOpen"]["sessionInfo"] + 31
    assert result["exported"] < 2_200_000


# -- issue 20: writes made while degraded; callbacks that call back into the runtime ---------

BREAK_IDB = """() => {
    window.realTransaction ??= IDBDatabase.prototype.transaction;
    IDBDatabase.prototype.transaction = function () {
        throw new DOMException('injected by the test', 'InvalidStateError');
    };
}"""
HEAL_IDB = "() => { IDBDatabase.prototype.transaction = window.realTransaction; }"
GLOBAL_TEXTS = "() => rt.globalMemory().map((e) => e.text)"


def test_every_write_made_while_degraded_is_replayed_in_order_when_storage_heals(
    page: Page,
) -> None:
    idb_runtime(page, "adv-replay", "onStorageRestored: (e) => restored.push(e)")
    run(page, "note one")
    run(page, "note two")
    good = page.evaluate("() => rt.exportSession()")
    run(page, "note three")
    kept = page.evaluate(
        "async () => (await rt.promoteToGlobalMemory(['drinks tea', 'hates rain'])).promoted.map((e) => e.id)"
    )
    page.evaluate(BREAK_IDB)
    run(page, "note four")  # degrades: the turn goes on in memory
    # Every kind of write, while degraded: an import that replaces the session, a promotion,
    # a forget (a tombstone), and a turn on the imported session (its content and memory).
    page.evaluate("(text) => rt.importSession(text, { replace: true })", good)
    # An import without replace could not be replayed safely: refused while degraded.
    refused = page.evaluate(
        "(text) => rt.importSession(text).then(() => 'imported', (e) => [e.code, rt.history().length])",
        good,
    )
    assert refused == ["storage_degraded", 4]
    page.evaluate("() => rt.promoteToGlobalMemory(['likes jazz'])")
    assert page.evaluate("(id) => rt.forgetGlobalMemory(id)", kept[1]) is True
    run(page, "note five")
    status = page.evaluate("() => rt.storageStatus()")
    assert page.evaluate("() => degraded") == ["InvalidStateError"]
    assert status["degraded"] is True and status["unsynced"] == 2  # the turns four and five
    assert said(page) == ["note one", "note two", "note five"]
    page.evaluate(HEAL_IDB)
    time.sleep(2.2)  # the store tries the database again at most every 2 s
    run(page, "note six")
    restored = page.evaluate("() => restored")
    assert restored == [{"merged": 2, "replayed": 5}]
    assert page.evaluate("() => rt.storageStatus().degraded") is False
    assert said(page) == ["note one", "note two", "note five", "note six"]
    assert page.evaluate(GLOBAL_TEXTS) == ["drinks tea", "likes jazz"]
    memory = page.evaluate("() => rt.memory().map((e) => e.text)")
    assert "note five" in memory and not any("three" in m or "four" in m for m in memory)
    page.reload()
    idb_runtime(page, "adv-replay")
    assert said(page) == ["note one", "note two", "note five", "note six"]
    assert page.evaluate(GLOBAL_TEXTS) == ["drinks tea", "likes jazz"]
    assert page.evaluate("() => rt.memory().map((e) => e.text)") == memory


# A page provider that calls back into its runtime (or a second runtime on the session):
# each call's code lands in `codes`; the provider answers with them.
REENTER = """async (request, { signal }) => {
    const codes = await Promise.all(window.reentries.map((call) =>
        call().then(() => 'ok', (e) => e.code ?? e.name)));
    window.codes.push(...codes);
    return { text: codes.join(' ') };
}"""
# What an evaluate answers if the calls inside never settle (before the fix: for good).
HUNG = "new Promise((ok) => setTimeout(() => ok('hung'), 15000))"


def test_a_provider_embedder_or_hook_calling_back_in_gets_the_reentrancy_error_at_once(
    warm_page: Page,
) -> None:
    page = warm_page
    page.evaluate("() => { window.codes = []; window.embedded = 0; window.filtered = []; }")
    boot_runtime(
        page,
        f"""{{ provider: {REENTER}, memoryExtraction: 'model',
              embedder: async (texts) => {{
                  embedded += 1;
                  codes.push(await rt.exportSession().then(() => 'embedder ok', (e) => 'embedder ' + e.code));
                  return texts.map(() => [1, 0]);
              }},
              sensitivityFilter: (entry) => {{
                  filtered.push(rt.promoteToGlobalMemory(['x']).then(() => 'ok', (e) => e.code));
                  return null;
              }} }}""",
    )
    page.evaluate(
        """() => { window.reentries = [() => rt.exportSession(), () => rt.run('inner'),
                     () => rt.promoteToGlobalMemory(['x']), () => rt.forgetGlobalMemory('g'),
                     () => rt.idle()]; }"""
    )
    started = time.monotonic()
    result = page.evaluate(
        f"""async () => Promise.race([{HUNG}, (async () => {{
            const first = await rt.run('remember that I like tea');
            await rt.idle();
            const second = await rt.run('and coffee?');
            await rt.idle();
            await rt.promoteToGlobalMemory(['likes tea']);
            return {{ statuses: [first.state.status, second.state.status], codes, embedded,
                      filtered: await Promise.all(filtered),
                      users: rt.history().filter((m) => m.role === 'user').map((m) => m.content),
                      next: (await rt.run('after')).state.status }};
        }})()])"""
    )
    assert result != "hung" and time.monotonic() - started < 15
    assert result["statuses"] == ["succeeded", "succeeded"]
    # Each model call (the answers and the extractions) was refused each call back in.
    assert len(result["codes"]) >= 10 and set(result["codes"]) == {
        "reentrant_call",
        "embedder reentrant_call",
    }
    assert result["embedded"] >= 1 and "embedder reentrant_call" in result["codes"]
    assert result["filtered"] and set(result["filtered"]) == {"reentrant_call"}
    assert result["users"] == ["remember that I like tea", "and coffee?"]
    assert result["next"] == "succeeded"


MODES = pytest.mark.parametrize("mode", ["", "worker: true, "], ids=["page", "worker"])


@MODES
def test_the_page_calling_while_the_memory_extraction_runs_is_queued_not_refused(
    warm_page: Page, mode: str
) -> None:
    """After run() resolves, the model extraction's call goes on: the page's own calls then
    are queued behind it, as before (only the provider's calls back in are refused)."""
    page = warm_page
    boot_runtime(
        page,
        """{ MODE memoryExtraction: 'model', provider: async (request) => {
                window.inFlight = true;
                await new Promise((ok) => setTimeout(ok, 400));
                window.inFlight = false;
                window.modelCalls += 1;
                return { text: '{"facts": [], "preferences": [], "decisions": []}' };
            } }""".replace("MODE", mode),
    )
    result = page.evaluate(
        f"""async () => Promise.race([{HUNG}, (async () => {{
            window.modelCalls = 0;
            await rt.run('I live in Paris and I prefer tea to coffee');
            // The extraction's call starts once the answer's turn is kept, how soon depends
            // on the machine (a fresh CI run's worker took over 50 ms): wait until it has.
            const until = Date.now() + 5000;
            while (!window.inFlight && window.modelCalls < 2 && Date.now() < until) {{
                await new Promise((ok) => setTimeout(ok, 5));
            }}
            const extracting = window.inFlight;
            const exported = await rt.exportSession().then(() => 'ok', (e) => e.code);
            const afterExport = window.modelCalls;
            const next = await rt.run('and coffee?').then((r) => r.state.status, (e) => e.code);
            return {{ extracting, exported, afterExport, next }};
        }})()])"""
    )
    assert result == {"extracting": True, "exported": "ok", "afterExport": 2, "next": "succeeded"}


@MODES
def test_a_provider_calling_back_in_can_still_be_aborted_and_the_next_run_works(
    warm_page: Page, mode: str
) -> None:
    page = warm_page
    page.evaluate("() => { window.codes = []; }")
    boot_runtime(
        page,
        """{ MODE memoryExtraction: 'off', provider: async (request, { signal }) => {
                try { await rt.exportSession(); codes.push('ok'); } catch (e) { codes.push(e.code); }
                if (window.wait) await new Promise((ok) => signal.addEventListener('abort', ok));
                return { text: 'answered' };
            } }""".replace("MODE", mode),
    )
    result = page.evaluate(
        f"""async () => Promise.race([{HUNG}, (async () => {{
            window.wait = true;
            const controller = new AbortController();
            const running = rt.run('hello', {{ signal: controller.signal }}).then(
                (r) => r.state.status, (e) => e.code);
            setTimeout(() => controller.abort(), 300);
            const first = await running;
            window.wait = false;
            const next = (await rt.run('again')).output;
            return {{ first, next, codes }};
        }})()])"""
    )
    assert result != "hung"
    assert result["first"] == "cancelled"
    assert result["next"] == "answered"
    assert result["codes"] == ["reentrant_call", "reentrant_call"]


def test_a_second_runtime_on_the_session_called_from_inside_a_turn_is_refused_at_once(
    page: Page,
) -> None:
    idb_runtime(
        page,
        "adv-second",
        f"""skillTimeoutMs: 20000, provider: {REENTER}, memoryExtraction: 'off',
            skills: [{{ name: 'inner', description: 'calls the other runtime',
                        run: async () => {{
                            const codes = [];
                            for (const call of window.reentries) {{
                                try {{ await call(); codes.push('ok'); }} catch (e) {{ codes.push(e.code); }}
                            }}
                            return codes;
                        }} }}]""",
    )
    page.evaluate(
        """async () => {
            window.codes = [];
            window.rt2 = await agrun.createRuntime({ sessionId: 's', dbName: 'adv-second' });
            window.reentries = [() => rt2.exportSession(), () => rt2.run('inner'),
                                () => rt2.importSession('{}')];
        }"""
    )
    started = time.monotonic()
    result = page.evaluate(
        f"""async () => Promise.race([{HUNG}, (async () => {{
            const skill = await rt.run('x', {{ skill: 'inner' }});
            const model = await rt.run('y');
            const other = await rt2.run('from the other');
            return {{ skill: skill.output, model: model.output, codes,
                      other: other.state.status, unrelated: await rt2.exportSession().then(() => 'ok') }};
        }})()])"""
    )
    assert result != "hung" and time.monotonic() - started < 15
    assert result["skill"] == ["reentrant_call"] * 3
    assert result["model"] == "reentrant_call reentrant_call reentrant_call"
    assert result["other"] == "succeeded" and result["unrelated"] == "ok"
