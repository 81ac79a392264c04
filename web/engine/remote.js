// Worker mode, the page's side: `createRuntime({ worker: true })` runs Pyodide and agrun in a
// module Web Worker (./worker.js), so boot and turns never block the page. What must stay in
// the page stays here and is called across: the page's skills, its provider and embedder
// functions, its own session store, onEvent, onProgress and the storage callbacks. The runtime's read methods
// (history(), sessionMemory(), lastPack(), ...) answer at once from a mirror the worker
// refreshes after every operation, so a page's code reads the same in both modes. Which
// operations cross and which the mirror answers is declared once, in ./operations.js.
import { agrunFile } from '../boot/boot.js';
import { AgrunBootError, AgrunConfigError, AgrunError } from '../errors.js';
import { describeThrown } from '../plain.js';
import { openStore } from '../session-store.js';
import { joinedPerTask, openChannel } from './channel.js';
import { heartbeat } from './heartbeat.js';
import { checkReply, runSkill } from './host.js';
import { OPERATIONS, defineOperations, mirroredOperations, payloadOf } from './operations.js';
import { keep } from './keeping.js';
import { checkQueuedHelper } from './queued-helpers.js';

// One worker per page and Pyodide folder, shared by every runtime created in worker mode (as
// one interpreter is shared in the page): the second runtime does not boot again.
const workers = new Map();
let nextRuntime = 1;

/**
 * Start a runtime in the page's agrun worker.
 * @param {{ config: object, indexURL: string, wheels: object[], pyodideHttp: boolean }} prepared
 * @param {object} opts the page's checked options (its functions stay here)
 */
export async function startRemoteEngine(prepared, opts, progress) {
  const rid = nextRuntime++;
  const page = {
    skills: (opts.skills ?? []).slice(),
    provider: typeof opts.provider === 'function' ? opts.provider : undefined,
    embed: typeof opts.embedder === 'function' ? opts.embedder : undefined,
    store: isPageStore(opts.storage) ? openStore(opts) : null,
    onEvent: opts.onEvent,
    onStorageDegraded: opts.onStorageDegraded,
    onStorageRestored: opts.onStorageRestored,
    onDataLoss: opts.onDataLoss,
    progress,
    inside: 0, // the page's functions the runtime is inside now (Runtime#refuseReentry)
    answering: 0, // runs whose answer is not in yet
    untilAnswered: new Set(), // calls counted as inside until then (see inside())
    // The Web Lock the worker holds for each operation, as in the page (engine.js lockName).
    lockName: takesLock(opts) ? `agrun:turn:${prepared.config.sessionId}` : null,
    locks: new Map(),
    engine: null,
  };
  const worker = workerFor(prepared.indexURL);
  worker.runtimes.set(rid, page);
  try {
    const views = await worker.channel.call('create', {
      rid,
      prepared,
      storage: page.store ? { kind: 'page', lock: typeof page.store.withSessionLock === 'function' } : opts.storage ?? 'indexeddb',
      dbName: opts.dbName,
    });
    page.engine = new RemoteEngine(worker, rid, page, views);
    return page.engine;
  } catch (error) {
    worker.runtimes.delete(rid);
    throw error;
  }
}

const isPageStore = (storage) => storage !== undefined && typeof storage === 'object';

// Whether the worker takes the session's Web Lock for each operation: on IndexedDB (the
// default), or on a page store that has withSessionLock.
function takesLock(opts) {
  if (isPageStore(opts.storage)) return typeof opts.storage.withSessionLock === 'function';
  return (opts.storage ?? 'indexeddb') === 'indexeddb';
}

// Count the runtime as inside one of the page's functions while `work` runs, or until the
// worker aborts it (the turn goes on without it even if it never settles). After a run's
// answer (the memory extraction's model call) only until `work` returns its Promise, as in
// the page (host.js called()).
async function inside(page, signal, work) {
  page.inside += 1;
  let left = false;
  const leave = () => {
    if (!left) page.inside -= 1;
    left = true;
  };
  signal?.addEventListener('abort', leave, { once: true });
  try {
    const pending = work();
    if (page.answering === 0) leave();
    else page.untilAnswered.add(leave);
    return await pending;
  } finally {
    signal?.removeEventListener('abort', leave);
    leave();
  }
}

/** A runtime in the worker, seen from the page: calls cross, reads come from the mirror. */
class RemoteEngine {
  #worker;
  #rid;
  #page;
  #mirror;
  #closed = false;
  // What the worker's runtime went on with after the last answer (never rejects).
  #kept = Promise.resolve();

  constructor(worker, rid, page, views) {
    this.#worker = worker;
    this.#rid = rid;
    this.#page = page;
    this.#mirror = { content: new Map() };
    for (const name of mirroredOperations('appended')) this.#mirror[name] = [];
    this.#take(views);
  }

  get inside() {
    return this.#page.inside;
  }

  get lockName() {
    return this.#page.lockName;
  }

  async run(input, runOptionsJson, signal, sink) {
    // A skill's matcher is synchronous: the page answers it for this input before the turn.
    const applies = this.#page.skills.map((skill) => {
      if (!skill.applies) return null;
      try {
        return { verdict: skill.applies(input) === true };
      } catch (thrown) {
        return { threw: describeThrown(thrown) };
      }
    });
    const onProgress = ({ token, event }) => {
      if (token !== undefined) sink.onToken?.(token);
      else sink.onEvent?.(event);
    };
    this.#page.answering += 1;
    try {
      const reply = await this.#call('run', { input, runOptionsJson, applies }, { signal, onProgress });
      // The worker keeps the turn after this answer; `settled()` in the page waits for it.
      const kept = this.idle();
      this.#kept = kept.catch(() => {});
      keep(kept);
      return reply;
    } finally {
      this.#page.answering -= 1;
      for (const leave of this.#page.untilAnswered) leave();
      this.#page.untilAnswered.clear();
    }
  }

  /** In the worker; the page's own tokenizer or ranker cannot cross to it. */
  async whatIf(runId, optionsJson, hooks = {}) {
    if (hooks.tokenizer || hooks.ranker) {
      throw new AgrunConfigError(
        "whatIf() with a tokenizer or ranker calls the page's functions, which a runtime in a worker cannot reach: create the runtime without 'worker' to pass them, or leave them out",
        { code: 'worker_unsupported' },
      );
    }
    return this.#call('whatIf', payloadOf('whatIf', [runId, optionsJson]));
  }

  /** From the mirror; the read is replayed in the worker so the store's LRU and counters move. */
  content(ref) {
    const entry = this.#read().content.get(ref);
    this.#worker.channel.notify('contentRead', { rid: this.#rid, ref });
    if (!entry || (entry.expiresAt !== null && entry.expiresAt <= Date.now())) {
      throw new AgrunError(`no stored content under '${ref}' (evicted, expired or never stored)`, { code: 'content_ref_not_found' });
    }
    return { ...entry, lastUsedAt: Date.now() };
  }

  storageStatus() {
    const store = this.#page.store?.status?.();
    return { ...this.#read().storageStatus, ...store };
  }

  diagnostics() {
    return { ...this.#read().diagnostics, worker: true };
  }

  /** Refuse further calls now; close the worker's runtime once the last turn is kept. */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    await this.#kept;
    this.#worker.channel.notify('close', { rid: this.#rid });
    this.#worker.runtimes.delete(this.#rid);
  }

  /** Memory appended since the mirror's (sent with a skill call: it reads memory here). */
  takeMemory(memory) {
    this.#append('memory', memory);
  }

  /** The worker's fresh storage status (sent with each storage callback). */
  takeStorageStatus(status) {
    if (status) this.#mirror.storageStatus = status;
  }

  // The declared operations not written out above: a `queued` one is a call to the worker,
  // one the mirror answers is read from it, and a `pageOnly` one is refused.
  static {
    defineOperations(this.prototype, (name, { queued, mirror, pageOnly }) => {
      if (queued) {
        return async function (...args) {
          return this.#call(name, payloadOf(name, args));
        };
      }
      if (mirror === 'whole') {
        return function () {
          return this.#read()[name];
        };
      }
      if (mirror === 'appended') {
        return function () {
          return this.#read()[name].slice();
        };
      }
      return function () {
        throw new AgrunConfigError(
          `${name}() ${pageOnly.why}, which a runtime in a worker cannot answer: create the runtime without 'worker' to call it, or ${pageOnly.instead}`,
          { code: 'worker_unsupported' },
        );
      };
    });
  }

  async #call(kind, payload, options) {
    this.#read();
    const { value, views } = await this.#worker.channel.call(kind, { rid: this.#rid, ...payload }, options);
    this.#take(views);
    return value;
  }

  // What the worker sent after an operation: what changed, appended to or replacing the mirror.
  #take(views) {
    if (!views) return;
    const mirror = this.#mirror;
    const { content, ...rest } = views;
    for (const [name, view] of Object.entries(rest)) {
      if (OPERATIONS[name].mirror === 'appended') this.#append(name, view);
      else mirror[name] = view;
    }
    const live = new Map(content.live.map(([ref, expiresAt]) => [ref, expiresAt]));
    for (const entry of content.added) mirror.content.set(entry.ref, entry);
    for (const ref of mirror.content.keys()) if (!live.has(ref)) mirror.content.delete(ref);
    for (const [ref, expiresAt] of live) {
      const entry = mirror.content.get(ref);
      if (entry) entry.expiresAt = expiresAt;
    }
  }

  // A list the worker sent as `{ from, items }`: the items from position `from` on.
  #append(name, { from, items }) {
    const mirror = this.#mirror;
    mirror[name] = from === 0 ? items : mirror[name].concat(items);
  }

  #read() {
    if (this.#closed) throw new AgrunError('this runtime was closed', { code: 'closed' });
    return this.#mirror;
  }
}

// The page's worker for `indexURL`, started on first use. If it dies, every call waiting on
// it fails with 'interpreter_failed', the page's turn locks it held are let go, and the next
// createRuntime starts another. A worker's death is seen three ways, since
// `worker.terminate()` and the worker's own `self.close()` fire no event at all:
// - an 'error' or 'messageerror' event (a module that did not load, a reply that cannot be read);
// - a Web Lock the worker holds from its start, which the browser lets go when the worker is
//   gone: the page's request for it is granted at that moment;
// - a heartbeat while a call waits: a worker that sends nothing for `heartbeat.limitMs`
//   (the page pings it every `heartbeat.intervalMs`) is taken for dead and terminated.
function workerFor(indexURL) {
  const running = workers.get(indexURL);
  if (running) return running;
  const worker = new Worker(agrunFile('engine/worker.js'), { type: 'module', name: 'agrun' });
  const shared = { worker, runtimes: new Map(), channel: null, gone: false, heard: false };
  const watch = watchHeartbeat(shared, (message) => dead(message));
  const dead = (message) => {
    if (shared.gone) return;
    shared.gone = true;
    if (workers.get(indexURL) === shared) workers.delete(indexURL);
    watch.stop();
    worker.terminate();
    // A worker that never said anything did not start (its module did not load): a boot failure.
    shared.channel.close(
      shared.heard
        ? new AgrunError(`agrun's worker stopped: ${message}`, { code: 'interpreter_failed' })
        : new AgrunBootError(`agrun's worker could not start: ${message}`),
    );
    for (const page of shared.runtimes.values()) {
      for (const release of page.locks.values()) release();
      page.locks.clear();
    }
  };
  worker.addEventListener('error', (event) => {
    event.preventDefault();
    dead(event.message || 'it could not be loaded');
  });
  worker.addEventListener('messageerror', () => dead('a message from it could not be read'));
  worker.addEventListener('message', watch.heard);
  shared.channel = openChannel(worker, pageHandlers(shared, dead), { onWaiting: watch.waiting });
  workers.set(indexURL, shared);
  watchLock(shared, dead);
  return shared;
}

function watchHeartbeat(shared, dead) {
  let timer = null;
  let heardAt = 0;
  let beatAt = 0;
  const stop = () => {
    clearInterval(timer);
    timer = null;
  };
  const beat = () => {
    const now = performance.now();
    // The page itself did not run for a while (a debugger pause, a long task of its own): the
    // worker's answers may still be queued behind this tick, so its silence does not count.
    if (now - beatAt > 2 * heartbeat.intervalMs) heardAt = now;
    beatAt = now;
    const silent = now - heardAt;
    if (silent > heartbeat.limitMs) dead(`it sent nothing for ${Math.round(silent)} ms while a call waited`);
    else shared.channel.notify('ping', null);
  };
  return {
    stop,
    heard: () => {
      shared.heard = true;
      heardAt = performance.now();
    },
    waiting: (count) => {
      if (count === 0) stop();
      else if (timer === null && !shared.gone) {
        heardAt = beatAt = performance.now();
        timer = setInterval(beat, heartbeat.intervalMs);
      }
    },
  };
}

// The worker takes a lock of its own and holds it until it is gone; the page then asks for
// the same lock, which it is granted only once the worker no longer exists. (Web Locks exist
// in secure contexts only; elsewhere the heartbeat alone watches.)
function watchLock(shared, dead) {
  const locks = globalThis.navigator?.locks;
  if (!locks) return;
  const name = `agrun:worker:${Date.now().toString(36)}:${Math.random().toString(36).slice(2)}`;
  shared.channel.call('holdLock', { name }).then(
    (held) => held && locks.request(name, () => dead('it was terminated or closed itself')),
    () => {}, // the worker died first: dead() already ran
  );
}

// What the worker asks of the page.
function pageHandlers(shared, dead) {
  const runtime = (rid) => {
    const page = shared.runtimes.get(rid);
    if (!page) throw new AgrunError('that runtime was closed', { code: 'closed' });
    return page;
  };
  return {
    skill: (call, { signal }) => runPageSkill(shared, runtime(call.rid), call, signal),

    // The pieces the provider gives in one task cross as one message, before its answer.
    async provider({ rid, request }, { signal, progress }) {
      const page = runtime(rid);
      const tokens = joinedPerTask(progress);
      try {
        const reply = await inside(page, signal, () => page.provider(request, { signal, onToken: (text) => typeof text === 'string' && tokens.add(text) }));
        return checkReply(reply);
      } finally {
        tokens.flush();
      }
    },

    embed: ({ rid, texts }, { signal } = {}) => {
      const page = runtime(rid);
      return inside(page, signal, () => page.embed(texts));
    },

    store: ({ rid, method, args }) => runtime(rid).store[method](...args),

    // The page's own store's turn lock, held for the worker until it says 'storeUnlock'.
    storeLock: ({ rid, sessionId, lockId }) => {
      const page = runtime(rid);
      return new Promise((acquired, failed) => {
        page.store
          .withSessionLock(sessionId, () => new Promise((release) => {
            page.locks.set(lockId, release);
            acquired();
          }))
          .catch(failed);
      });
    },
    storeUnlock: ({ rid, lockId }) => {
      const page = shared.runtimes.get(rid);
      page?.locks.get(lockId)?.();
      page?.locks.delete(lockId);
    },

    event: ({ rid, event }) => call(shared.runtimes.get(rid)?.onEvent, event, 'onEvent'),
    degraded: ({ rid, info, status }) => storageCallback(shared.runtimes.get(rid), 'onStorageDegraded', info, status),
    restored: ({ rid, info, status }) => storageCallback(shared.runtimes.get(rid), 'onStorageRestored', info, status),
    dataLoss: ({ rid, info, status }) => storageCallback(shared.runtimes.get(rid), 'onDataLoss', info, status),
    progress: ({ rid, event }) => shared.runtimes.get(rid)?.progress(event),
    fatal: ({ message }) => dead(message),
    pong: () => {}, // heard: that is all the heartbeat needs
  };
}

function storageCallback(page, name, info, status) {
  if (!page) return;
  page.engine?.takeStorageStatus(status);
  call(page[name], info, name);
}

// A page's callback must never break the runtime: its errors are reported, not thrown.
function call(callback, value, name) {
  if (!callback) return;
  try {
    callback(value);
  } catch (error) {
    console.warn(`agrun: ${name} threw`, error);
  }
}

// A page skill run for the worker. Helpers Python answers at once (reading memory, asking to
// remember, noting sources) are checked here and queued: the worker applies them, in order,
// before it answers the next helper that must cross (content, clarification) and before the
// skill's output. So a skill sees the same helpers, with the same errors, in both modes.
async function runPageSkill(shared, page, { rid, index, payloadJson, callId, memory }, signal) {
  page.engine.takeMemory(memory);
  let queued = [];
  const callHelper = (name, argumentJson) => {
    if (name === 'readMemory') return JSON.stringify({ ok: true, result: page.engine.memory() });
    if (name === 'readContent' || name === 'askClarification') {
      const flushed = queued;
      queued = [];
      return shared.channel.call('helper', { rid, callId, name, argumentJson, queued: flushed });
    }
    const answer = checkQueuedHelper(name, JSON.parse(argumentJson));
    if (answer.ok) queued.push([name, argumentJson]);
    return JSON.stringify(answer);
  };
  return inside(page, signal, async () => {
    const replyJson = await runSkill(page.skills[index], payloadJson, callHelper, signal);
    return { replyJson, queued };
  });
}
