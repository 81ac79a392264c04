// Worker mode, the worker's side (./remote.js is the page's): Pyodide and agrun's runtimes
// live here, each an engine (./engine.js) as it would be in the page. The page's skills, its
// provider function and its own store are called across; IndexedDB and Web Locks are used from
// here. After every operation the page gets what changed, for its mirror. The operations it
// answers and the views it sends are those ./operations.js declares.
// dist/engine/worker.js is this module bundled as ../agrun.js is (build.sh). Every module this
// one's imports load is imported here too, flat, so the bundle names each shared module itself
// (tests/test_js_imports.py keeps the list whole).
import '../boot/boot.js';
import '../boot/page-packages.js';
import '../boot/snapshot.js';
import '../boot/site-files.js';
import '../options.js';
import '../storage/indexeddb.js';
import '../storage/memory.js';
import '../storage/records.js';
import '../storage/resilient.js';
import '../storage/schema.js';
import '../storage/schemas.js';
import '../wire.js';
import './keeping.js';
import { AgrunError } from '../errors.js';
import { describeThrown } from '../plain.js';
import { openStore } from '../session-store.js';
import { STORE_METHODS } from '../storage/index.js';
import { joinedPerTask, openChannel } from './channel.js';
import { startEngine } from './engine.js';
import { createHost } from './host.js';
import { argumentsOf, mirroredOperations, queuedOperations } from './operations.js';

const runtimes = new Map(); // rid -> { engine, host, seen }
let nextLock = 1;

// Each queued operation the page calls: the engine's method, then what changed.
const operations = Object.fromEntries(
  queuedOperations().map(([name]) => [name, (payload) => operation(payload, (engine) => engine[name](...argumentsOf(name, payload)))]),
);

const channel = openChannel(self, {
  ...operations,

  async create({ rid, prepared, storage, dbName }) {
    const store = storageFor(rid, storage, dbName);
    const host = workerHost(rid, prepared.config.skills.length, store);
    const progress = (event) => channel.notify('progress', { rid, event });
    const engine = await startEngine(prepared, host, store, progress);
    engine.whenFatal().catch((error) => channel.notify('fatal', { message: error.message }));
    const runtime = { engine, host, seen: { history: null, memory: null, content: [] } };
    runtimes.set(rid, runtime);
    return viewsOf(runtime);
  },

  // A run, written out: the page's matchers answered before it, tokens and events as they come.
  run: ({ rid, input, runOptionsJson, applies }, { signal, progress }) =>
    operation({ rid }, async (engine, host) => {
      host.applies = (index, asked) => {
        const answer = asked === input ? applies[index] : null;
        if (!answer) throw new AgrunError(`skill ${index} has no matcher answer for this input`, { code: 'internal_error' });
        if (answer.threw !== undefined) throw new Error(answer.threw);
        return answer.verdict;
      };
      const sink = streamedToPage(progress);
      try {
        return await engine.run(input, runOptionsJson, signal, sink);
      } finally {
        sink.flush();
      }
    }),

  // A page skill's helper that must cross: first what it queued, in order, then this one.
  helper({ rid, callId, name, argumentJson, queued }) {
    const callHelper = runtimeOf(rid).host.skillCalls.get(callId);
    if (!callHelper) throw new AgrunError(`${name}() was called after the skill returned`, { code: 'helpers_closed' });
    for (const [queuedName, queuedArgument] of queued) callHelper(queuedName, queuedArgument);
    return callHelper(name, argumentJson);
  },

  // The page read content from its mirror: read it here too, so the store's LRU, counters and
  // ContentRetrieved event are what they would be in the page.
  contentRead({ rid, ref }) {
    try {
      runtimes.get(rid)?.engine.content(ref);
    } catch {
      // not found: the page threw content_ref_not_found already
    }
  },

  close({ rid }) {
    runtimes.get(rid)?.engine.close();
    runtimes.delete(rid);
  },

  // The page watches this worker (./remote.js): it pings while a call waits, and asks for a
  // lock this worker holds until it is gone, when the browser lets the page have it.
  ping: () => channel.notify('pong', null),
  holdLock({ name }) {
    const locks = self.navigator?.locks;
    if (!locks) return false;
    return new Promise((held) => {
      locks.request(name, () => {
        held(true);
        return new Promise(() => {});
      });
    });
  },
});

// A call from the page that cannot be read would never be answered: the page's side of it is
// waiting, and only a new worker can help.
self.addEventListener('messageerror', () => {
  channel.notify('fatal', { message: 'a message from the page could not be read' });
});

// What a run streams, on its way to the page: the pieces of the reply given in one task go as
// one message (./channel.js joinedPerTask). An event goes after the pieces given before it,
// the answer after them all.
function streamedToPage(progress) {
  const tokens = joinedPerTask((token) => progress({ token }));
  return {
    onToken: tokens.add,
    onEvent(event) {
      tokens.flush();
      progress({ event });
    },
    flush: tokens.flush,
  };
}

async function operation({ rid }, fn) {
  const runtime = runtimeOf(rid);
  const value = await fn(runtime.engine, runtime.host);
  return { value, views: viewsOf(runtime) };
}

function runtimeOf(rid) {
  const runtime = runtimes.get(rid);
  if (!runtime) throw new AgrunError('this runtime was closed', { code: 'closed' });
  return runtime;
}

// The session store, used from here: IndexedDB (made resilient) or memory; or the page's own
// store, each method called across, its turn lock held for us by the page.
function storageFor(rid, storage, dbName) {
  if (storage?.kind !== 'page') {
    return openStore({
      storage,
      dbName,
      onStorageDegraded: (info) => storageNotice('degraded', rid, info),
      onStorageRestored: (info) => storageNotice('restored', rid, info),
      onDataLoss: (info) => storageNotice('dataLoss', rid, info),
    });
  }
  const store = Object.fromEntries(
    STORE_METHODS.map((method) => [method, (...args) => channel.call('store', { rid, method, args })]),
  );
  if (storage.lock) {
    store.withSessionLock = async (sessionId, work) => {
      const lockId = nextLock++;
      await channel.call('storeLock', { rid, sessionId, lockId });
      try {
        return await work();
      } finally {
        channel.notify('storeUnlock', { rid, lockId });
      }
    };
  }
  return store;
}

function storageNotice(kind, rid, info) {
  const status = runtimes.get(rid)?.engine.storageStatus() ?? null;
  channel.notify(kind, { rid, info, status });
}

// The object Python calls into, as in the page (./host.js), but the page's skills, matchers,
// provider and event callback are across the channel.
function workerHost(rid, skillCount, store) {
  const provider = (request, { signal, onToken }) =>
    channel.call('provider', { rid, request }, { signal, onProgress: onToken });
  const embed = (texts) => channel.call('embed', { rid, texts });
  const onEvent = (event) => channel.notify('event', { rid, event });
  const host = createHost({ skills: new Array(skillCount), onEvent, store, provider, embed });
  let nextCall = 1;
  host.skillCalls = new Map(); // callId -> Python's helper callback, while that skill runs
  host.callSkill = (index, payloadJson, callHelper) => {
    const callId = nextCall++;
    host.skillCalls.set(callId, callHelper);
    const controller = new AbortController();
    // The skill reads memory in the page, from the mirror: bring it up to date (a turn start
    // may have read another tab's entries).
    const runtime = runtimes.get(rid);
    const { memory } = mirrorOf(runtime, { appended: ['memory'], content: false, whole: [] });
    const promise = channel
      .call('skill', { rid, index, payloadJson, callId, memory }, { signal: controller.signal })
      .then(({ replyJson, queued }) => {
        for (const [name, argumentJson] of queued) callHelper(name, argumentJson);
        return replyJson;
      })
      .catch((error) => JSON.stringify({ ok: false, raised: describeThrown(error) }))
      .finally(() => host.skillCalls.delete(callId));
    return { promise, abort: (reason) => controller.abort(reason) };
  };
  return host;
}

// What changed since the page's mirror was last told: the lists as what was appended (or
// everything, when what the mirror holds is no longer a prefix: an import, another tab's
// replace), new content entries and the refs still live, and the small views whole.
function viewsOf(runtime) {
  return mirrorOf(runtime, {
    appended: mirroredOperations('appended'),
    content: true,
    whole: mirroredOperations('whole'),
  });
}

// One call to Python for the views asked, `seen` moved on to what they tell the mirror.
// `seen[list]` is { length, lastId } of what the mirror holds; `seen.content` its refs.
function mirrorOf({ engine, seen }, { appended, content, whole }) {
  const views = engine.mirror({
    appended: Object.fromEntries(appended.map((name) => [name, seen[name]])),
    content: content ? seen.content : null,
    whole,
  });
  for (const name of appended) {
    const { from, items } = views[name];
    const length = from + items.length;
    seen[name] = { length, lastId: length ? (items.at(-1)?.id ?? seen[name].lastId) : null };
  }
  if (content) seen.content = views.content.live.map(([ref]) => ref);
  return views;
}
