// agrun's JavaScript face: createRuntime() boots Pyodide from the files beside this module,
// installs agrun's wheels and hands back a runtime whose results are plain JS objects.
import { bootPyodide, resolveIndexURL, whenFatal } from './boot.js';
import { AgrunBootError, AgrunConfigError, AgrunError, errorFromWire, unwrap } from './errors.js';
import { createHost, describeSkills } from './host.js';
import { checkOptions, describe } from './options.js';
import { checkPackages, checkPythonSkills, enableHttp, installPackages } from './packages.js';
import { describeThrown, findNonPlain } from './plain.js';
import { MAX_ID_LENGTH, STORE_METHODS, createMemorySessionStore, createSessionStore } from './storage/index.js';
import { parseExport } from './storage/records.js';

export { AgrunBootError, AgrunConfigError, AgrunError };

const RUNTIME_OPTIONS = {
  indexURL: 'string',
  onProgress: 'function',
  onEvent: 'function',
  skills: 'array',
  defaultSkill: 'string',
  maxCycles: 'number',
  skillTimeoutMs: 'number',
  countTokens: 'function',
  sessionId: 'string',
  storage: 'store',
  dbName: 'string',
  onStorageDegraded: 'function',
  onStorageRestored: 'function',
  globalMemory: 'object',
  provider: 'provider',
  model: 'string',
  systemPrompt: 'string',
  contextWindow: 'number',
  maxReplyTokens: 'number',
  temperature: 'number',
  maxCorrections: 'number',
  runTokenBudget: 'number',
  tokenFactor: 'number',
  packages: 'array',
  pythonSkills: 'array',
  pyodideHttp: 'boolean',
  redactSecrets: 'boolean',
  memoryExtraction: 'string',
  memoryCommands: 'boolean',
  contentStore: 'contentStore',
  sensitivityFilter: 'function',
};

// How rt.stream() hears the events of its own run (not an option a page passes).
const RUN_EVENTS = Symbol('agrun.runEvents');

const RUN_OPTIONS = {
  signal: 'signal',
  skill: 'string',
  onToken: 'function',
};

/**
 * Boot agrun and create a runtime.
 * @param {import('./agrun').RuntimeOptions} [options]
 * @returns {Promise<Runtime>}
 */
export async function createRuntime(options) {
  const opts = checkOptions('createRuntime', options, RUNTIME_OPTIONS);
  checkIdentifier('sessionId', opts.sessionId);
  checkIdentifier('dbName', opts.dbName);
  const skills = opts.skills ?? [];
  const wheels = checkPackages(opts.packages);
  const store = openStore(opts);
  const config = {
    storage: Boolean(store),
    sessionId: opts.sessionId ?? 'default',
    globalMemory: globalMemoryEnabled(opts.globalMemory),
    skills: describeSkills(skills),
    pythonSkills: checkPythonSkills(opts.pythonSkills),
    events: Boolean(opts.onEvent),
    countTokens: Boolean(opts.countTokens),
    provider: describeProvider(opts.provider),
    sensitivityFilter: Boolean(opts.sensitivityFilter),
    ...pick(opts, [
      'defaultSkill', 'maxCycles', 'skillTimeoutMs', 'model', 'systemPrompt', 'contextWindow',
      'maxReplyTokens', 'temperature', 'maxCorrections', 'runTokenBudget', 'tokenFactor',
      'redactSecrets', 'memoryExtraction', 'memoryCommands', 'contentStore',
    ]),
  };
  const progress = reporter(opts.onProgress);
  const pyodide = await bootPyodide(resolveIndexURL(opts.indexURL), progress);
  // The page's own wheels go in before its Python skills are imported (web/packages.js).
  await installPackages(pyodide, wheels);
  if (opts.pyodideHttp) await enableHttp(pyodide);
  progress({ stage: 'runtime', loaded: 0, total: 1 });
  const module = pyodide.pyimport('agrun.adapters.pyodide.bridge');
  const provider = typeof opts.provider === 'function' ? opts.provider : undefined;
  const host = createHost(skills.slice(), opts.onEvent, opts.countTokens, store, provider, opts.sensitivityFilter);
  let bridge;
  try {
    bridge = module.create_bridge(JSON.stringify(config), host);
  } catch (cause) {
    throw new AgrunBootError(`agrun could not create its runtime: ${cause.message}`, { cause });
  } finally {
    module.destroy();
  }
  if (typeof bridge === 'string') throw errorFromWire(JSON.parse(bridge).error);
  const runtime = new Runtime(bridge, store, config.sessionId, host, pyodide);
  await runtime.open();
  progress({ stage: 'runtime', loaded: 1, total: 1 });
  return runtime;
}

// The model a page asked for, as Python builds it: its own function (called through the
// host), or an OpenAI-compatible server reached with the browser's fetch. The API key is
// passed to Python once, kept in that provider object, and never stored or logged.
function describeProvider(provider) {
  if (provider === undefined) return undefined;
  if (typeof provider === 'function') return { kind: 'function' };
  const described = checkOptions('createRuntime: provider', provider, {
    kind: 'string', baseUrl: 'string', model: 'string', apiKey: 'string', timeoutMs: 'number',
  });
  if (described.kind !== 'openai' || !/^https?:\/\//.test(described.baseUrl ?? '')) {
    throw new AgrunConfigError(
      "createRuntime: option 'provider' must be a function (request, { signal, onToken }) => reply, or { kind: 'openai', baseUrl: 'http(s)://…/v1', model?, apiKey? }",
    );
  }
  return described;
}

// A session id or database name: a non-empty string a store can key on.
function checkIdentifier(option, value) {
  if (value === undefined) return;
  if (!value.trim() || value.length > MAX_ID_LENGTH) {
    throw new AgrunConfigError(
      `createRuntime: option '${option}' must be a non-empty string of at most ${MAX_ID_LENGTH} characters, got ${describe(value)}${value.length > 40 ? ` (${value.length} characters)` : ''}`,
    );
  }
}

// The session store: IndexedDB made resilient (default), memory, or the page's own store.
function openStore({ storage = 'indexeddb', dbName, onStorageDegraded, onStorageRestored }) {
  if (storage === false) return null;
  if (storage === 'indexeddb') return createSessionStore({ dbName, onStorageDegraded, onStorageRestored });
  if (storage === 'memory') return createMemorySessionStore();
  const missing = STORE_METHODS.filter((name) => typeof storage[name] !== 'function');
  if (missing.length) {
    throw new AgrunConfigError(
      `createRuntime: option 'storage' is a store without ${missing.join(', ')}(): a session store needs ${STORE_METHODS.join(', ')}`,
    );
  }
  return guardStore(storage);
}

// A page's own store may reject with anything; what crosses into Python must be an Error.
function guardStore(store) {
  const guarded = Object.create(store);
  for (const name of STORE_METHODS) {
    guarded[name] = async (...args) => {
      try {
        return await store[name](...args);
      } catch (thrown) {
        if (thrown instanceof Error) throw thrown;
        throw new AgrunError(`the session store's ${name}() threw ${describeThrown(thrown)}`, { code: 'storage_error' });
      }
    };
  }
  return guarded;
}

function globalMemoryEnabled(globalMemory) {
  if (globalMemory === undefined) return true;
  checkOptions('createRuntime: globalMemory', globalMemory, { enabled: 'boolean' });
  return globalMemory.enabled !== false;
}

/** A booted runtime. Create it with `createRuntime`. */
class Runtime {
  #bridge;
  #store;
  #sessionId;
  #host;
  #pyodide;
  #tail = Promise.resolve(); // the runtime's operations, one after the other

  constructor(bridge, store, sessionId, host, pyodide) {
    this.#bridge = bridge;
    this.#store = store;
    this.#sessionId = sessionId;
    this.#host = host;
    this.#pyodide = pyodide;
  }

  /** Resume the session from storage (done by createRuntime; again is harmless). */
  async open() {
    this.#refuseReentry('open');
    unwrap(await this.#withSessionLock(() => this.#live().open()));
  }

  /**
   * Run one input through the runtime.
   * @param {string} input what the person said
   * @param {import('./agrun').RunOptions} [options]
   * @returns {Promise<import('./agrun').RunResult>} a failed run resolves too (status
   *   'failed', with `error`); an aborted run rejects with an 'AbortError' carrying `result`.
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
      ...pick(opts, ['skill']),
      onToken: Boolean(sink.onToken),
      events: Boolean(sink.onEvent),
    });
    // One turn at a time per session, across tabs: load, run and commit under one lock.
    const reply = await this.#withSessionLock(async () => {
      this.#host.sink = sink;
      try {
        return await this.#live().run(input, runOptions, opts.signal);
      } finally {
        this.#host.sink = null;
      }
    });
    const result = unwrap(reply);
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
    return unwrap(this.#live().build_context(JSON.stringify(request)));
  }

  /** This session as JSON text (an export file), to move it to another browser or CPython. */
  async exportSession() {
    this.#refuseReentry('exportSession');
    return unwrap(await this.#withSessionLock(() => this.#live().export_session()));
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
    unwrap(await this.#withSessionLock(() => this.#live().import_session(jsonText, replace)));
  }

  /** The session's messages (the person's and the replies), oldest first. */
  history() {
    return unwrap(this.#live().history());
  }

  /**
   * Whether turns are reaching durable storage: `{ persistent, sessionId, pending,
   * lastError, degraded, backend, reason, method }` (`degraded`: the store fell back to memory).
   */
  storageStatus() {
    const status = unwrap(this.#live().storage_status());
    const store = this.#store?.status?.() ?? { degraded: false, backend: this.#store ? 'custom' : 'none' };
    return { ...status, ...store };
  }

  /** What the runtime keeps between runs: `{ lastRun }`, a small summary. */
  state() {
    return unwrap(this.#live().state());
  }

  /** Every memory entry the runtime retained, oldest first. */
  memory() {
    return unwrap(this.#live().memory());
  }

  /**
   * A stored body by its content ref (an earlier reply, whole; spec 002): `{ ref, kind, body,
   * bytes, digest, ... }`. Throws AgrunError code 'content_ref_not_found' for a ref that was
   * evicted, expired or never stored.
   */
  content(ref) {
    if (typeof ref !== 'string') throw new AgrunConfigError(`content() takes a content ref, got ${describe(ref)}`);
    return unwrap(this.#live().content(ref));
  }

  /**
   * The context pack the last model call was sent: its layers of entries (each with its
   * sources), and compressionMetadata.dropped (what was left out, and why). Null before any
   * model call. What a "why did it answer that" panel shows.
   */
  lastPack() {
    return unwrap(this.#live().last_pack());
  }

  /** The session memory (facts, preferences, decisions, summary, recent turns), or null. */
  sessionMemory() {
    return unwrap(this.#live().continuity()).sessionMemory;
  }

  /** The inquiry context (goal, topic, query, sources, clarification state), or null. */
  inquiry() {
    return unwrap(this.#live().continuity()).inquiry;
  }

  /** Global memory's live entries (empty when it is disabled). */
  globalMemory() {
    return unwrap(this.#live().continuity()).globalMemory;
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
    return unwrap(await this.#withSessionLock(() => this.#live().promote_to_global_memory(JSON.stringify(entries))));
  }

  /** Forget a global-memory entry by id (a tombstone is stored); resolves to whether it was there. */
  async forgetGlobalMemory(id) {
    this.#refuseReentry('forgetGlobalMemory');
    if (typeof id !== 'string') throw new AgrunConfigError(`forgetGlobalMemory() takes an entry id, got ${describe(id)}`);
    return unwrap(await this.#withSessionLock(() => this.#live().forget_global_memory(id)));
  }

  /** Counts for tests and debugging: `{ liveProxies }` (helper proxies alive; 0 between runs). */
  diagnostics() {
    return unwrap(this.#live().diagnostics());
  }

  /** Release the Python side of this runtime. Further calls throw. */
  close() {
    if (!this.#bridge) return;
    this.#bridge.close();
    this.#bridge.destroy();
    this.#bridge = undefined;
  }

  // One of this runtime's skills is running and calls back in: the call would wait for the
  // turn it is part of. (JavaScript cannot tell a skill's call from a concurrent call of the
  // page's, so any call made while a skill of this runtime runs is refused.)
  #refuseReentry(method) {
    if (this.#host.activeSkills > 0) {
      throw new AgrunConfigError(
        `${method}() was called while a skill of this runtime is running, which would wait for its own run to end; return output (or use helpers.requestCycle()) instead, or wait for run() to settle`,
        { code: 'reentrant_call' },
      );
    }
  }

  // The turn's work under the session's lock. The lock is released however the work ends,
  // including when the interpreter dies under it (its promise would never settle).
  #withSessionLock(fn) {
    const work = () => Promise.race([fn(), whenFatal(this.#pyodide)]);
    const lock = this.#store?.withSessionLock;
    const next = this.#tail.then(() => (lock ? lock(this.#sessionId, work) : work()));
    this.#tail = next.catch(() => {});
    return next;
  }

  #live() {
    if (!this.#bridge) throw new AgrunError('this runtime was closed', { code: 'closed' });
    return this.#bridge;
  }
}

function pick(object, names) {
  return Object.fromEntries(names.filter((n) => object[n] !== undefined).map((n) => [n, object[n]]));
}

// A page's progress callback must never break the boot: its errors are reported, not thrown.
function reporter(onProgress) {
  return (event) => {
    if (!onProgress) return;
    try {
      onProgress(event);
    } catch (error) {
      console.warn('agrun: onProgress threw', error);
    }
  };
}
