// The resilient session store: a fatal storage error swaps the primary store for an
// in-memory fallback for the rest of the page's life, fires onStorageDegraded once, and
// retries the failed call there, so the conversation continues and no turn is lost.
// Non-fatal errors (one aborted transaction, a ConstraintError) are thrown for a retry.
import { RESTORE, createMemorySessionStore } from './memory.js';
import { dumpExport } from './records.js';

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

/** Whether `error` means the store cannot be used any more. */
export function isFatalStorageError(error) {
  return error?.fatal === true || FATAL_ERROR_NAMES.has(error?.name);
}

const METHODS = [
  'commitTurn',
  'loadSession',
  'listSessions',
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
  { onStorageDegraded, fallback, isFatal = isFatalStorageError } = {},
) {
  // A write-through copy of every session this page loaded or committed: what the
  // fallback starts from. It is the fallback itself unless the caller gave one.
  const mirror = createMemorySessionStore();
  const mirrored = new Set();
  let mirrorGlobal = [];
  const backup = fallback ?? mirror;
  let degraded = null; // { reason, method, error }
  let switching = null; // settles once the fallback holds everything the mirror had

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
        try {
          onStorageDegraded?.({ reason: degraded.reason, method, error });
        } catch (handlerError) {
          globalThis.reportError?.(handlerError); // a host's handler must not break the run
        }
      })();
    }
    await switching;
  }

  // `caller` is the public method the host called, reported if this call degrades the store.
  async function call(method, args, caller = method) {
    if (switching) {
      await switching;
      return { value: await backup[method](...args), onPrimary: false };
    }
    try {
      return { value: await primary[method](...args), onPrimary: true };
    } catch (error) {
      // Once another call has switched, whatever failed on the dropped primary goes to the fallback.
      if (!switching && !isFatal(error)) throw error;
      await degrade(error, caller);
      return { value: await backup[method](...args), onPrimary: false };
    }
  }

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
        const { value, onPrimary } = await call('loadSession', [sessionId], 'commitTurn');
        if (onPrimary) await remember(value, sessionId);
      }
      const { value: seq, onPrimary } = await call('commitTurn', [commit]);
      if (onPrimary) {
        mirrored.add(sessionId);
        if (!switching) {
          await mirror.commitTurn({ ...commit, globalMemory: [] });
          mirrorGlobal.push(...(commit.globalMemory ?? []));
        } else {
          await backup.commitTurn(commit); // landed while the store was switching: keep all of it
          if (backup !== mirror) await mirror.commitTurn({ ...commit, globalMemory: [] });
        }
      }
      return seq;
    },

    async loadSession(sessionId) {
      const { value, onPrimary } = await call('loadSession', [sessionId]);
      if (onPrimary) await remember(value, sessionId);
      return value;
    },

    async readGlobalMemory() {
      const { value, onPrimary } = await call('readGlobalMemory', []);
      if (onPrimary && !switching) mirrorGlobal = JSON.parse(JSON.stringify(value));
      return value;
    },

    async appendGlobalMemory(entries) {
      const { onPrimary } = await call('appendGlobalMemory', [entries]);
      if (onPrimary && switching) await backup.appendGlobalMemory(entries);
      else if (onPrimary) mirrorGlobal.push(...JSON.parse(JSON.stringify(entries)));
    },

    async importSession(text, options) {
      const { value: sessionId, onPrimary } = await call('importSession', [text, options]);
      if (onPrimary) {
        mirrored.add(sessionId);
        await mirror.importSession(text, { replace: true });
      }
      return sessionId;
    },

    async listSessions() {
      return (await call('listSessions', [])).value;
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

    /** Which store answers now, and why it changed. */
    status() {
      return degraded
        ? {
            degraded: true,
            backend: backup.kind ?? 'memory',
            reason: degraded.reason,
            method: degraded.method,
          }
        : { degraded: false, backend: primary.kind ?? 'primary', reason: null, method: null };
    },

    async close() {
      await Promise.allSettled([
        primary.close?.(),
        backup.close?.(),
        backup === mirror ? null : mirror.close(),
      ]);
    },
  };

  for (const method of METHODS) {
    if (typeof primary[method] !== 'function')
      throw new TypeError(`the primary store has no ${method}() method`);
  }
  return store;
}
