// The resilient session store: a transient failure is retried; a fatal one (tried twice, so a
// dropped connection that merely needs reopening does not count) swaps the primary store for
// an in-memory fallback that already holds every session this page touched, fires
// onStorageDegraded once, and retries the failed call there, so no turn is lost. While
// degraded, every write the page makes (turns with their content and memory, imports, global
// memory promotions and forgets, renames, clears and deletes) is also kept in a journal; at
// each turn start the store tries the database again, and once it opens, replays the journal
// in order after whatever other tabs wrote meanwhile and goes back to it (onStorageRestored).
// The one write that cannot be replayed safely, an import without `replace` (whether the
// database already holds that session cannot be checked), is refused while degraded
// (StorageDegradedError). A deleted database is never reopened: that would start an empty one
// under a live session.
import { RESTORE, createMemorySessionStore } from './memory.js';
import { StorageDegradedError, dumpExport } from './records.js';

// DOMException names (and agrun's own) after which a store is not worth trying again.
export const FATAL_ERROR_NAMES = new Set([
  'InvalidStateError', // Safari private mode, a connection closed under us
  'QuotaExceededError',
  'SecurityError', // storage denied for this origin or context
  'NotAllowedError', // permission denied
  'UnknownError', // the browser's backing store is broken
  'NotFoundError', // an object store is missing: the schema is not what we wrote
  'NotReadableError', // the backing files cannot be read
  'VersionError',
]);

// Names of failures that pass: the same call may succeed at once.
const TRANSIENT_ERROR_NAMES = new Set(['AbortError', 'TransactionInactiveError']);
const TRANSIENT_RETRIES = 2;
// Reasons that mean the database itself is gone: never reopen it.
const GONE = new Set(['DatabaseDeleted', 'ConnectionLost']);

/** Whether `error` means the store cannot be used any more. */
export function isFatalStorageError(error) {
  return error?.fatal === true || FATAL_ERROR_NAMES.has(error?.name);
}

const METHODS = [
  'commitTurn',
  'loadSession',
  'listSessions',
  'sessionInfo',
  'renameSession',
  'clearSession',
  'deleteSession',
  'readGlobalMemory',
  'appendGlobalMemory',
  'readRuntimeState',
  'exportSession',
  'importSession',
];

/**
 * Wrap `primary` so that a fatal error falls back to memory instead of losing the session.
 * @param {import('../storage').SessionStore} primary
 * @param {import('../storage').ResilientOptions} [options]
 * @returns {import('../storage').ResilientSessionStore}
 */
export function createResilientSessionStore(
  primary,
  {
    onStorageDegraded,
    onStorageRestored,
    fallback,
    reopen,
    retryAfterMs = 2000,
    isFatal = isFatalStorageError,
  } = {},
) {
  for (const method of METHODS) {
    if (typeof primary[method] !== 'function')
      throw new TypeError(`the primary store has no ${method}() method`);
  }
  // A write-through copy of every session this page loaded or committed: what the
  // fallback starts from. It is the fallback itself unless the caller gave one.
  const mirror = createMemorySessionStore();
  const mirrored = new Set();
  let mirrorGlobal = [];
  const backup = fallback ?? mirror;
  let degraded = null; // { reason, method, error }
  let switching = null; // settles once the fallback holds everything the mirror had
  // Writes made on the fallback, oldest first: what a restore replays. Each is
  // { commit } | { globalMemory } | { importText } (an import with replace: the only kind taken)
  // | { change: [method, ...args] } (a rename, clear or delete).
  let journal = [];
  let replayed = { turns: 0, writes: 0 }; // what landed of the journal so far (a restore may fail midway)
  let lastTry = 0;

  async function degrade(error, method) {
    if (!switching) {
      degraded = { reason: error?.reason ?? error?.name ?? 'Error', method, error };
      switching = (async () => {
        if (backup !== mirror) {
          for (const sessionId of mirrored) {
            const snapshot = await mirror.loadSession(sessionId);
            if (snapshot) await backup.importSession(dumpExport(snapshot), { replace: true });
          }
        }
        await backup.appendGlobalMemory(mirrorGlobal);
        try {
          await primary.close?.();
        } catch {
          // the broken store may fail to close too; it is dropped either way
        }
        lastTry = Date.now();
        notify(onStorageDegraded, { reason: degraded.reason, method, error });
      })();
    }
    await switching;
  }

  // Try the primary: transient failures again at once, a fatal one once more (the store
  // reopens a dropped connection), and only then give up on it.
  async function onPrimary(method, args) {
    let fatalSeen = false;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await primary[method](...args);
      } catch (error) {
        if (TRANSIENT_ERROR_NAMES.has(error?.name) && attempt < TRANSIENT_RETRIES) continue;
        if (isFatal(error) && !fatalSeen && !GONE.has(error?.reason)) {
          fatalSeen = true;
          continue;
        }
        throw error;
      }
    }
  }

  // `caller` is the public method the host called, reported if this call degrades the store.
  async function call(method, args, caller = method) {
    if (switching) {
      await switching;
      return { value: await backup[method](...args), onPrimary: false };
    }
    try {
      return { value: await onPrimary(method, args), onPrimary: true };
    } catch (error) {
      // Once another call has switched, whatever failed on the dropped primary goes to the fallback.
      if (!switching && !isFatal(error)) throw error;
      await degrade(error, caller);
      return { value: await backup[method](...args), onPrimary: false };
    }
  }

  // Degraded, and the database may be back: replay this page's writes into it, in the order
  // they were made (after whatever other tabs committed meanwhile: turn ids make a commit
  // idempotent), and go back to it. Each write is one transaction and leaves the journal once
  // it landed, so a replay that fails midway goes on from there next time and never writes
  // anything twice (global memory rows have no key that would make a second append harmless).
  async function tryRestore() {
    if (!degraded || !reopen || GONE.has(degraded.reason) || Date.now() - lastTry < retryAfterMs) return;
    await switching;
    lastTry = Date.now();
    let candidate;
    try {
      candidate = reopen();
      await candidate.listSessions();
      while (journal.length) {
        const write = journal[0];
        if (write.commit) await candidate.commitTurn(write.commit);
        else if (write.globalMemory) await candidate.appendGlobalMemory(write.globalMemory);
        else if (write.change) await candidate[write.change[0]](...write.change.slice(1));
        else await candidate.importSession(write.importText, { replace: true });
        journal.shift();
        replayed.writes += 1;
        if (write.commit) replayed.turns += 1;
      }
    } catch {
      await candidate?.close?.().catch(() => {});
      return; // still broken: stay on the fallback, try again at a later turn
    }
    const { turns: merged, writes } = replayed;
    primary = candidate;
    replayed = { turns: 0, writes: 0 };
    degraded = null;
    switching = null;
    mirrored.clear(); // re-read each session from the database: it holds other tabs' turns too
    notify(onStorageRestored, { merged, replayed: writes });
  }

  // An import without `replace` must fail if the session is stored. While degraded only the
  // database could tell (another tab may have stored it), and a replay that found it there
  // could neither overwrite it nor drop this page's import: so it is refused while degraded,
  // and a database that fails under it degrades the store and refuses it too (nothing written).
  async function importNew(text, options) {
    if (!switching) {
      try {
        const sessionId = await onPrimary('importSession', [text, options]);
        mirrored.add(sessionId);
        await mirror.importSession(text, { replace: true });
        return sessionId;
      } catch (error) {
        if (!switching && !isFatal(error)) throw error;
        await degrade(error, 'importSession');
      }
    }
    await switching;
    throw new StorageDegradedError(
      `IndexedDB is unavailable (the store fell back to memory: ${degraded?.reason ?? 'degraded'}), so ` +
        'whether this session is already stored cannot be checked: import with { replace: true } to ' +
        'overwrite whatever is stored (replayed into IndexedDB when it is back), or import again once ' +
        'storage is restored',
    );
  }

  // A rename, clear or delete: made on whichever store answers, on the mirror too (so a later
  // degrade carries it over), and journaled while degraded.
  async function change(method, args) {
    const { value, onPrimary: fromPrimary } = await call(method, args);
    if (!fromPrimary) {
      journal.push({ change: [method, ...JSON.parse(JSON.stringify(args))] });
    } else if (switching) {
      await backup[method](...args); // landed while the store was switching: keep it there too
      if (backup !== mirror) await mirror[method](...args);
    } else {
      await mirror[method](...args);
    }
    return value;
  }

  const unsyncedTurns = () => journal.filter((write) => write.commit).length;

  async function remember(snapshot, sessionId) {
    // A read that lands after the switch must not overwrite what the fallback has since taken.
    if (switching && mirrored.has(sessionId)) return;
    mirrored.add(sessionId);
    if (snapshot) mirror[RESTORE](snapshot);
  }

  const store = {
    kind: 'resilient',

    async commitTurn(commit) {
      const sessionId = commit?.sessionId;
      // Know the whole session before the first commit, so a later switch carries all of it.
      if (!switching && typeof sessionId === 'string' && !mirrored.has(sessionId)) {
        const { value, onPrimary: fromPrimary } = await call('loadSession', [sessionId], 'commitTurn');
        if (fromPrimary) await remember(value, sessionId);
      }
      const { value: seq, onPrimary: fromPrimary } = await call('commitTurn', [commit]);
      if (fromPrimary) {
        mirrored.add(sessionId);
        if (!switching) {
          await mirror.commitTurn({ ...commit, globalMemory: [] });
          mirrorGlobal.push(...(commit.globalMemory ?? []));
        } else {
          await backup.commitTurn(commit); // landed while the store was switching: keep all of it
          if (backup !== mirror) await mirror.commitTurn({ ...commit, globalMemory: [] });
        }
      } else {
        journal.push({ commit: JSON.parse(JSON.stringify(commit)) });
      }
      return seq;
    },

    async loadSession(sessionId, options) {
      // The mirror needs the whole session (it is what a degrade carries over): a lean load
      // of a session it does not hold yet reads it whole once and hands back the lean part.
      const whole = options?.allEvents === false && !switching && !mirrored.has(sessionId);
      const { value, onPrimary: fromPrimary } = await call('loadSession', whole ? [sessionId] : [sessionId, options]);
      if (fromPrimary) await remember(value, sessionId);
      return whole && value ? leanEvents(value) : value;
    },

    async sessionInfo(sessionId) {
      // A turn starts with this call: the moment to see whether the database is back.
      await tryRestore();
      return (await call('sessionInfo', [sessionId])).value;
    },

    async readGlobalMemory() {
      const { value, onPrimary: fromPrimary } = await call('readGlobalMemory', []);
      if (fromPrimary && !switching) mirrorGlobal = JSON.parse(JSON.stringify(value));
      return value;
    },

    async appendGlobalMemory(entries) {
      const { onPrimary: fromPrimary } = await call('appendGlobalMemory', [entries]);
      if (fromPrimary && switching) await backup.appendGlobalMemory(entries);
      else if (fromPrimary) mirrorGlobal.push(...JSON.parse(JSON.stringify(entries)));
      else journal.push({ globalMemory: JSON.parse(JSON.stringify(entries)) });
    },

    async importSession(text, options) {
      const replace = options?.replace === true;
      if (!replace) return importNew(text, options);
      const { value: sessionId, onPrimary: fromPrimary } = await call('importSession', [text, options]);
      if (fromPrimary) {
        mirrored.add(sessionId);
        await mirror.importSession(text, { replace: true });
      } else {
        journal.push({ importText: text });
      }
      return sessionId;
    },

    async listSessions() {
      return (await call('listSessions', [])).value;
    },

    async renameSession(sessionId, title) {
      await change('renameSession', [sessionId, title]);
    },

    async clearSession(sessionId) {
      return change('clearSession', [sessionId]);
    },

    async deleteSession(sessionId) {
      return change('deleteSession', [sessionId]);
    },

    async readRuntimeState() {
      return (await call('readRuntimeState', [])).value;
    },

    async exportSession(sessionId) {
      return (await call('exportSession', [sessionId])).value;
    },

    /** Whether the store has switched to its in-memory fallback. */
    isDegraded() {
      return degraded !== null;
    },

    /**
     * Which store answers now, and why it changed: `unsynced` counts this page's turns that
     * only the fallback holds, `unsyncedWrites` every write it holds (turns, imports, global
     * memory), replayed into the database in order if it comes back (exportSession() still
     * returns them meanwhile). `dataLoss`: what the browser discarded when it opened the
     * database (Chromium deletes a site's IndexedDB it finds damaged), or null.
     */
    status() {
      return degraded
        ? {
            degraded: true,
            backend: backup.kind ?? 'memory',
            reason: degraded.reason,
            method: degraded.method,
            unsynced: unsyncedTurns(),
            unsyncedWrites: journal.length,
            dataLoss: primary.dataLoss?.() ?? null,
          }
        : {
            degraded: false,
            backend: primary.kind ?? 'primary',
            reason: null,
            method: null,
            unsynced: 0,
            unsyncedWrites: 0,
            dataLoss: primary.dataLoss?.() ?? null,
          };
    },

    async close() {
      await Promise.allSettled([
        primary.close?.(),
        backup.close?.(),
        backup === mirror ? null : mirror.close(),
      ]);
    },
  };
  return store;
}

// The snapshot with only its last turn's events, as a lean load returns it.
function leanEvents(snapshot) {
  const last = snapshot.turns.length;
  return { ...snapshot, turns: snapshot.turns.map((t) => (t.seq === last ? t : { ...t, events: [] })) };
}

// A host's handler must never break the store's work: its errors are reported, not thrown.
function notify(handler, event) {
  try {
    handler?.(event);
  } catch (handlerError) {
    globalThis.reportError?.(handlerError);
  }
}
