// agrun's session stores: IndexedDB made resilient (the page default), plus the parts.
import { createIndexedDbSessionStore } from './indexeddb.js';
import { createResilientSessionStore } from './resilient.js';

export { createIndexedDbSessionStore, DEFAULT_DB_NAME, SCHEMA_VERSION } from './indexeddb.js';
export { createMemorySessionStore } from './memory.js';
export { createResilientSessionStore, FATAL_ERROR_NAMES, isFatalStorageError } from './resilient.js';
export {
  EXPORT_FORMAT,
  FORMAT_VERSION,
  MAX_ID_LENGTH,
  STORE_METHODS,
  ImportRejectedError,
  SchemaTooNewError,
  SessionNotFoundError,
  StorageClosedError,
  StorageDegradedError,
  StorageError,
  StorageOpenError,
} from './records.js';

/**
 * The store a page uses: IndexedDB, falling back to memory on a fatal error.
 * @param {import('../storage').SessionStoreOptions} [options]
 * @returns {import('../storage').ResilientSessionStore}
 */
export function createSessionStore({
  dbName,
  durability,
  maxImportBytes,
  onStorageDegraded,
  onStorageRestored,
  onDataLoss,
  fallback,
} = {}) {
  const open = () => createIndexedDbSessionStore({ dbName, durability, maxImportBytes, onDataLoss });
  return withSessionLocks(
    createResilientSessionStore(open(), { onStorageDegraded, onStorageRestored, fallback, reopen: open }),
  );
}

/**
 * Run `fn` while holding this session's turn lock (Web Locks), so two tabs take turns on one
 * session: load, run, commit, then the other tab loads what this one committed.
 * Without Web Locks, `fn` just runs.
 */
export function withSessionLock(sessionId, fn) {
  const locks = globalThis.navigator?.locks;
  return locks ? locks.request(`agrun:turn:${sessionId}`, () => fn()) : Promise.resolve().then(fn);
}

function withSessionLocks(store) {
  store.withSessionLock = withSessionLock;
  return store;
}
