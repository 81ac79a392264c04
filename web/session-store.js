// The session store a page chose (option 'storage'): IndexedDB made resilient (the default),
// memory, none, or the page's own object, whose errors are made Errors before Python sees them.
import { AgrunConfigError, AgrunError } from './errors.js';
import { describeThrown } from './plain.js';
import { STORE_METHODS, createMemorySessionStore, createSessionStore } from './storage/index.js';

// A page's own store must have every method a session store has.
export function checkStore(storage) {
  if (storage === undefined || storage === false || storage === 'indexeddb' || storage === 'memory') return;
  const missing = STORE_METHODS.filter((name) => typeof storage[name] !== 'function');
  if (missing.length) {
    throw new AgrunConfigError(
      `createRuntime: option 'storage' is a store without ${missing.join(', ')}(): a session store needs ${STORE_METHODS.join(', ')}`,
    );
  }
}

/** The session store: IndexedDB made resilient (default), memory, or the page's own store. */
export function openStore({ storage = 'indexeddb', dbName, onStorageDegraded, onStorageRestored, onDataLoss }) {
  if (storage === false) return null;
  if (storage === 'indexeddb') return createSessionStore({ dbName, onStorageDegraded, onStorageRestored, onDataLoss });
  if (storage === 'memory') return createMemorySessionStore();
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
