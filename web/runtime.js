// The runtime a page holds: it checks what the page passes and asks its engine, which runs
// agrun's Python in this page (./engine/engine.js) or in a Web Worker (./engine/remote.js).
// Results are plain JS objects either way. What each engine operation is (queued under the
// turn lock, or read from a worker's mirror) is declared once, in ./engine/operations.js.
import { AgrunConfigError, AgrunError, withThrowIfFailed } from './errors.js';
import { checkOptions, describe, pick } from './options.js';
import { findNonPlain, readOnlyView } from './plain.js';
import { parseExport } from './storage/records.js';

// How rt.stream() hears the events of its own run (not an option a page passes).
const RUN_EVENTS = Symbol('agrun.runEvents');

// The page's open runtimes (weakly: one the page drops without close() may still be
// collected): a second runtime on a session is refused while the first is inside one of the
// page's functions (see Runtime#refuseReentry).
const openRuntimes = new Set();

export const RUN_OPTIONS = {
  signal: 'signal',
  skill: 'string',
  onToken: 'function',
  usageLimits: 'object',
  outputSchema: 'object',
};

// rt.whatIf's options, as Python's what_if takes them (`tokenizer`: a token counter).
const WHAT_IF_OPTIONS = { budget: 'number', window: 'number', call: 'number', tokenizer: 'function', ranker: 'function' };

/** A booted runtime. Create it with `createRuntime`. */
export class Runtime {
  #engine;
  #ref;
  #online = null;

  /**
   * @param {object} engine where the runtime runs: ./engine/engine.js (this page) or ./engine/remote.js (a worker)
   * @param {{ sync?: boolean, onSync?: Function }} [options] `sync`: sync whenever the page
   *   comes back online, telling `onSync(result, error)` how it went
   */
  constructor(engine, { sync = false, onSync } = {}) {
    this.#engine = engine;
    this.#ref = new WeakRef(this);
    openRuntimes.add(this.#ref);
    if (sync && typeof globalThis.addEventListener === 'function') {
      this.#online = () => {
        this.sync().then(
          (result) => report(onSync, result, null),
          (error) => report(onSync, null, error),
        );
      };
      globalThis.addEventListener('online', this.#online);
    }
  }

  /**
   * Sync the session with the server of the `sync` option: push the turns it lacks, then hold
   * its session, merged in the order the server received the turns (docs/storage.md "Sync").
   * Runs under the session's lock, as a turn does. Resolves to `{ pushed, pulled, token }`
   * (keep `token`: every later sync of the session must show it); rejects with AgrunError code
   * 'sync_forbidden' (the token does not own the session) or 'sync_failed' (offline, server
   * failed), changing nothing here.
   * @returns {Promise<import('./agrun').SyncResult>}
   */
  async sync() {
    this.#refuseReentry('sync');
    return this.#engine.sync();
  }

  /** Resume the session from storage (done by createRuntime; again is harmless). */
  async open() {
    this.#refuseReentry('open');
    await this.#engine.open();
  }

  /**
   * Run one input through the runtime.
   * @param {string} input what the person said
   * @param {import('./agrun').RunOptions} [options]
   * @returns {Promise<import('./agrun').RunResult>} a failed run resolves too (status
   *   'failed', with `error`; `result.throwIfFailed()` turns it into a RunFailedError); an
   *   aborted run rejects with an 'AbortError' carrying `result`.
   */
  async run(input, options) {
    const opts = checkOptions('run', options, RUN_OPTIONS);
    if (typeof input !== 'string') {
      throw new AgrunConfigError(`run() takes a string input, got ${describe(input)}: pass text`);
    }
    if (!input.isWellFormed()) {
      throw new AgrunConfigError(
        'run() input holds a lone surrogate: it is not Unicode text and cannot be stored; pass input.toWellFormed()',
        { code: 'invalid_input' },
      );
    }
    this.#refuseReentry('run');
    const sink = { onToken: opts.onToken, onEvent: opts[RUN_EVENTS] };
    const runOptions = JSON.stringify({
      ...pick(opts, ['skill', 'usageLimits', 'outputSchema']),
      onToken: Boolean(sink.onToken),
      events: Boolean(sink.onEvent),
    });
    // One turn at a time per session, across tabs: load, run and commit under one lock.
    const result = withThrowIfFailed(await this.#engine.run(input, runOptions, opts.signal, sink));
    addSessionContextView(result.state);
    if (result.state.status === 'cancelled') {
      const error = new AgrunError(`the run was cancelled: ${result.error?.message ?? 'aborted'}`, { code: 'cancelled' });
      error.name = 'AbortError';
      error.result = result;
      throw error;
    }
    return result;
  }

  /**
   * Run one input and get what happens as it happens:
   * `for await (const item of rt.stream(input)) ...` yields `{ type: 'token', text }` for each
   * piece of the model's reply, `{ type: 'event', event }` for each event of the run, and last
   * `{ type: 'result', result }`. Takes run()'s options; breaking out of the loop aborts the run.
   * @param {string} input
   * @param {import('./agrun').RunOptions} [options]
   * @returns {AsyncIterable<import('./agrun').StreamItem>}
   */
  async *stream(input, options = {}) {
    const { signal, ...rest } = checkOptions('stream', options, RUN_OPTIONS);
    const items = [];
    let wake = () => {};
    const push = (item) => {
      items.push(item);
      wake();
    };
    const controller = new AbortController();
    const stop = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', stop, { once: true });
    if (signal?.aborted) stop();
    const running = this.run(input, {
      ...rest,
      signal: controller.signal,
      onToken: (text) => {
        rest.onToken?.(text);
        push({ type: 'token', text });
      },
      [RUN_EVENTS]: (event) => push({ type: 'event', event }),
    }).then(
      (result) => push({ type: 'result', result }),
      (error) => push({ type: 'error', error }),
    );
    try {
      for (;;) {
        while (items.length) {
          const item = items.shift();
          if (item.type === 'error') throw item.error;
          yield item;
          if (item.type === 'result') return;
        }
        await new Promise((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      signal?.removeEventListener('abort', stop);
      if (!controller.signal.aborted) controller.abort(new DOMException('the stream was left', 'AbortError'));
      await running;
    }
  }

  /**
   * Build a token-budgeted context pack (docs/context.md has the request's shape).
   * @param {import('./agrun').ContextRequest} request camelCase, plain data
   * @returns {import('./agrun').ContextPack} layers L0-L4, budgetUsed, budgetLimit, ...
   */
  buildContext(request) {
    const problem = findNonPlain(request);
    if (problem) throw new AgrunConfigError(`buildContext: the request is not plain data: ${problem}`);
    return this.#engine.buildContext(JSON.stringify(request));
  }

  /**
   * Wait until what the last turn goes on with after run() resolves is done: its commit
   * (commitAfterAnswer), its trace, and with a model extraction its memory close; so read
   * the store, sessionMemory() or state().lastRun after this. Later operations (run,
   * exportSession...) wait for it by themselves.
   * @returns {Promise<void>}
   */
  async idle() {
    this.#refuseReentry('idle');
    await this.#engine.idle();
  }

  /** This session as JSON text (an export file), to move it to another browser or CPython. */
  async exportSession() {
    this.#refuseReentry('exportSession');
    return this.#engine.exportSession();
  }

  /**
   * Store an exported session as this runtime's session and resume from it. A corrupt or
   * hostile file is rejected (code 'import_rejected') and changes nothing.
   * @param {string} jsonText
   * @param {{ replace?: boolean }} [options] replace a session that already has turns
   */
  async importSession(jsonText, options) {
    this.#refuseReentry('importSession');
    const { replace = false } = checkOptions('importSession', options, { replace: 'boolean' });
    if (typeof jsonText !== 'string') {
      throw new AgrunConfigError(`importSession() takes the export file's text, got ${describe(jsonText)}`);
    }
    // Checked here, with the schemas of the runtime's own models, and again by those models
    // in Python before anything is written: a file no runtime could read is never stored.
    parseExport(jsonText, { records: true });
    await this.#engine.importSession(jsonText, replace);
  }

  /**
   * The store's conversations, ordered by id: `{ sessionId, turnCount, lastCommittedAtMs,
   * title }` each. This runtime's session is listed once it has a turn or a title.
   * @returns {Promise<Array<{ sessionId: string, turnCount: number, lastCommittedAtMs: number | null, title: string | null }>>}
   */
  async listSessions() {
    this.#refuseReentry('listSessions');
    return this.#engine.listSessions();
  }

  /**
   * Store `title` with a session (null removes it). Rejects with code 'session_not_found'
   * for a session neither stored nor this runtime's, 'config_error' for a bad title.
   */
  async renameSession(sessionId, title) {
    this.#refuseReentry('renameSession');
    checkSessionId('renameSession', sessionId);
    if (title !== null && typeof title !== 'string') {
      throw new AgrunConfigError(`renameSession() takes a title (a string) or null, got ${describe(title)}`);
    }
    await this.#engine.renameSession(sessionId, title);
  }

  /**
   * Empty a session, keeping its id and title: its history, memory, session memory, inquiry,
   * content, traces and lastRun are removed (from this runtime too when it is its own, whose
   * next turn starts afresh). Global memory promoted from it stays.
   */
  async clearSession(sessionId) {
    this.#refuseReentry('clearSession');
    checkSessionId('clearSession', sessionId);
    await this.#engine.clearSession(sessionId);
  }

  /**
   * Remove a session entirely, title included (global memory promoted from it stays). This
   * runtime's own session: the runtime is emptied and keeps its id, stored again by a next turn.
   */
  async deleteSession(sessionId) {
    this.#refuseReentry('deleteSession');
    checkSessionId('deleteSession', sessionId);
    await this.#engine.deleteSession(sessionId);
  }

  /** The session's messages (the person's and the replies), oldest first. */
  history() {
    return this.#engine.history();
  }

  /**
   * Whether turns are reaching durable storage: `{ persistent, sessionId, pending,
   * lastError, degraded, backend, reason, method }` (`degraded`: the store fell back to memory).
   */
  storageStatus() {
    return this.#engine.storageStatus();
  }

  /** What the runtime keeps between runs: `{ lastRun }`, a small summary. */
  state() {
    return this.#engine.state();
  }

  /** Every memory entry the runtime retained, oldest first. */
  memory() {
    return this.#engine.memory();
  }

  /**
   * A stored body by its content ref (an earlier reply, whole; spec 002): `{ ref, kind, body,
   * bytes, digest, ... }`, deeply read-only (a write throws a TypeError). Throws AgrunError
   * code 'content_ref_not_found' for a ref that was evicted, expired or never stored.
   */
  content(ref) {
    if (typeof ref !== 'string') throw new AgrunConfigError(`content() takes a content ref, got ${describe(ref)}`);
    return readOnlyView(this.#engine.content(ref), 'content entry');
  }

  /**
   * The context pack the last model call was sent: its layers of entries (each with its
   * sources), and compressionMetadata.dropped (what was left out, and why). Null before any
   * model call. What a "why did it answer that" panel shows.
   */
  lastPack() {
    return this.#engine.lastPack();
  }

  /**
   * Why run `runId` answered as it did (issue 22): for each model call, the pack's digest,
   * its entries (id, layer, sources, tokens, compressed), what was dropped or merged into L3
   * and why, the provider's usage and the calibration factor used; and `attribution`, which
   * entries the answer used (with the answer's spans). Any model turn of the session whose
   * trace is still held (bounded per session, oldest evicted first), also after a reload.
   * Rejects with AgrunError code 'trace_not_found' otherwise.
   * @param {string} runId
   */
  async why(runId) {
    this.#refuseReentry('why');
    if (typeof runId !== 'string') throw new AgrunConfigError(`why() takes a run id, got ${describe(runId)}`);
    return this.#engine.why(runId);
  }

  /**
   * A recorded model call's pack rebuilt under another `budget` (tokens) or `window` (the
   * model's context window), `tokenizer` (a token counter, `(text) => number`) or `ranker`
   * (`(query, documents) => scores`), with no model called: `{ kept, compressed, dropped,
   * added, mergedIntoL3, tokensPerLayer, budgetBefore, budgetAfter, faithful }`. `call` picks
   * one of the run's calls (default the last, the one that answered). A tokenizer or ranker
   * is refused (code 'worker_unsupported') by a runtime in a worker: functions stay in the page.
   * @param {string} runId
   * @param {{ budget?: number, window?: number, call?: number, tokenizer?: (text: string) => number, ranker?: Function }} [options]
   */
  async whatIf(runId, options) {
    this.#refuseReentry('whatIf');
    if (typeof runId !== 'string') throw new AgrunConfigError(`whatIf() takes a run id, got ${describe(runId)}`);
    const { tokenizer, ranker, ...settings } = checkOptions('whatIf', options, WHAT_IF_OPTIONS);
    // The functions stay in this page; Python is told which ones there are.
    const flags = { ...(tokenizer ? { tokenizer: true } : {}), ...(ranker ? { ranker: true } : {}) };
    return this.#engine.whatIf(runId, JSON.stringify({ ...settings, ...flags }), { tokenizer, ranker });
  }

  /** The session memory (facts, preferences, decisions, summary, recent turns), or null. */
  sessionMemory() {
    return this.#engine.continuity().sessionMemory;
  }

  /** The inquiry context (goal, topic, query, sources, clarification state), or null. */
  inquiry() {
    return this.#engine.continuity().inquiry;
  }

  /** Global memory's live entries (empty when it is disabled). */
  globalMemory() {
    return this.#engine.continuity().globalMemory;
  }

  /**
   * Promote entries to global memory, through the sensitive-content filter and the page's
   * sensitivityFilter: each a string or `{ text, kind?: 'fact' | 'preference' | 'note' }`.
   * Resolves to `{ promoted, refused }` (what a filter refused is never written).
   */
  async promoteToGlobalMemory(entries) {
    this.#refuseReentry('promoteToGlobalMemory');
    const problem = findNonPlain(entries);
    if (problem || !Array.isArray(entries)) {
      throw new AgrunConfigError(`promoteToGlobalMemory() takes a list of entries${problem ? `: ${problem}` : ''}`);
    }
    return this.#engine.promoteToGlobalMemory(JSON.stringify(entries));
  }

  /** Forget a global-memory entry by id (a tombstone is stored); resolves to whether it was there. */
  async forgetGlobalMemory(id) {
    this.#refuseReentry('forgetGlobalMemory');
    if (typeof id !== 'string') throw new AgrunConfigError(`forgetGlobalMemory() takes an entry id, got ${describe(id)}`);
    return this.#engine.forgetGlobalMemory(id);
  }

  /** Counts for tests and debugging: `{ liveProxies }` (helper proxies alive; 0 between runs). */
  diagnostics() {
    return this.#engine.diagnostics();
  }

  /** Release the Python side of this runtime. Further calls throw. */
  /**
   * Further calls throw code 'closed' at once; the Python side is released once the last
   * turn is kept (its commit may follow its answer), which the promise waits for.
   * @returns {Promise<void>}
   */
  close() {
    if (this.#online) globalThis.removeEventListener('online', this.#online);
    openRuntimes.delete(this.#ref);
    return this.#engine.close();
  }

  // One of the page's functions this runtime called (a skill or its matcher, the provider,
  // the embedder, a context hook, sensitivityFilter) calls back in: the call would wait for
  // the turn it is part of, for good. So would a call to a second runtime on the same session
  // (it waits for the session's Web Lock, which the first holds until that function returns).
  // JavaScript cannot tell such a call from a concurrent call of the page's, so any call made
  // while this runtime, or another holding the same lock, is inside a page function is refused.
  #refuseReentry(method) {
    const lock = this.#engine.lockName;
    let holder = null;
    for (const ref of openRuntimes) {
      const rt = ref.deref();
      if (!rt) openRuntimes.delete(ref);
      else if (rt.#engine.inside > 0 && (rt === this || (lock !== null && rt.#engine.lockName === lock))) {
        holder = rt === this ? rt : (holder ?? rt);
      }
    }
    if (!holder) return;
    const whose = holder === this ? 'this runtime' : `another runtime on session lock '${lock}'`;
    throw new AgrunConfigError(
      `${method}() was called while ${whose} is inside one of the page's functions (a skill, the provider, the embedder or a hook), which would wait for that turn to end; return output (or use helpers.requestCycle()) instead, or wait for run() to settle`,
      { code: 'reentrant_call' },
    );
  }
}

// An automatic sync's outcome goes to the page's onSync, whose errors must not break the
// runtime; with no onSync, a failed sync is a warning (it is tried again at the next 'online').
function report(onSync, result, error) {
  try {
    if (onSync) onSync(result, error);
    else if (error) console.warn('agrun: sync after coming back online failed', error);
  } catch (thrown) {
    console.warn('agrun: onSync threw', thrown);
  }
}

// `state.sessionContextView`: a flattened, frozen copy of `contextSnapshot` for debug consumers
// that still read the old name. Not enumerable, so it is in no export, comparison or JSON:
// compatibility only, never the truth (that is `contextSnapshot`).
function addSessionContextView(state) {
  Object.defineProperty(state, 'sessionContextView', {
    enumerable: false,
    get() {
      const { sessionMemory, inquiryContext } = state.contextSnapshot ?? {};
      return Object.freeze({ ...sessionMemory, ...inquiryContext });
    },
  });
}

// A session id a conversation call takes: a non-empty string (the store checks its length).
function checkSessionId(method, sessionId) {
  if (typeof sessionId !== 'string' || sessionId.length === 0) {
    throw new AgrunConfigError(`${method}() takes a session id (a non-empty string), got ${describe(sessionId)}`);
  }
}
