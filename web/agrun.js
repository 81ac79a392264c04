// agrun's JavaScript face: createRuntime() boots Pyodide from the files beside this module,
// installs agrun's wheels and hands back a runtime whose results are plain JS objects.
import { bootPyodide, resolveIndexURL } from './boot.js';
import { AgrunBootError, AgrunConfigError, AgrunError, errorFromWire, unwrap } from './errors.js';
import { createHost, describeSkills } from './host.js';
import { checkOptions, describe } from './options.js';
import { findNonPlain } from './plain.js';
import { createMemorySessionStore, createSessionStore } from './storage/index.js';

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
  globalMemory: 'object',
};

const RUN_OPTIONS = {
  signal: 'signal',
  skill: 'string',
};

/**
 * Boot agrun and create a runtime.
 * @param {import('./agrun').RuntimeOptions} [options]
 * @returns {Promise<Runtime>}
 */
export async function createRuntime(options) {
  const opts = checkOptions('createRuntime', options, RUNTIME_OPTIONS);
  const skills = opts.skills ?? [];
  const store = openStore(opts);
  const config = {
    storage: Boolean(store),
    sessionId: opts.sessionId ?? 'default',
    globalMemory: globalMemoryEnabled(opts.globalMemory),
    skills: describeSkills(skills),
    events: Boolean(opts.onEvent),
    countTokens: Boolean(opts.countTokens),
    ...pick(opts, ['defaultSkill', 'maxCycles', 'skillTimeoutMs']),
  };
  const progress = reporter(opts.onProgress);
  const pyodide = await bootPyodide(resolveIndexURL(opts.indexURL), progress);
  progress({ stage: 'runtime', loaded: 0, total: 1 });
  const module = pyodide.pyimport('agrun.adapters.pyodide.bridge');
  let bridge;
  try {
    bridge = module.create_bridge(JSON.stringify(config), createHost(skills.slice(), opts.onEvent, opts.countTokens, store));
  } catch (cause) {
    throw new AgrunBootError(`agrun could not create its runtime: ${cause.message}`, { cause });
  } finally {
    module.destroy();
  }
  if (typeof bridge === 'string') throw errorFromWire(JSON.parse(bridge).error);
  const runtime = new Runtime(bridge, store, config.sessionId);
  await runtime.open();
  progress({ stage: 'runtime', loaded: 1, total: 1 });
  return runtime;
}

// The session store: IndexedDB made resilient (default), memory, or the page's own store.
function openStore({ storage = 'indexeddb', dbName, onStorageDegraded }) {
  if (storage === false) return null;
  if (storage === 'indexeddb') return createSessionStore({ dbName, onStorageDegraded });
  if (storage === 'memory') return createMemorySessionStore();
  return storage;
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

  constructor(bridge, store, sessionId) {
    this.#bridge = bridge;
    this.#store = store;
    this.#sessionId = sessionId;
  }

  /** Resume the session from storage (done by createRuntime; again is harmless). */
  async open() {
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
    const runOptions = JSON.stringify(pick(opts, ['skill']));
    // One turn at a time per session, across tabs: load, run and commit under one lock.
    const reply = await this.#withSessionLock(() => this.#live().run(input, runOptions, opts.signal));
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
    return unwrap(await this.#withSessionLock(() => this.#live().export_session()));
  }

  /**
   * Store an exported session as this runtime's session and resume from it. A corrupt or
   * hostile file is rejected (code 'import_rejected') and changes nothing.
   * @param {string} jsonText
   * @param {{ replace?: boolean }} [options] replace a session that already has turns
   */
  async importSession(jsonText, options) {
    const { replace = false } = checkOptions('importSession', options, { replace: 'boolean' });
    if (typeof jsonText !== 'string') {
      throw new AgrunConfigError(`importSession() takes the export file's text, got ${describe(jsonText)}`);
    }
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

  #withSessionLock(fn) {
    const lock = this.#store?.withSessionLock;
    return lock ? lock(this.#sessionId, fn) : fn();
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
