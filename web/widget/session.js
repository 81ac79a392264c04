// The widget's runtime: agrun.js loaded once per page, the session store made once per
// storage choice (so a runtime made again, say with global memory off, keeps the session
// and a degraded store's unsynced turns), and createRuntime called with the widget's options.
const AGRUN_URL = new URL('../agrun.js', import.meta.url).href;
const STORAGE_URL = new URL('../storage.js', import.meta.url).href;

let modules;

/** agrun.js and its stores, fetched once per page (started beside the shell's first paint). */
export function loadAgrun() {
  modules ??= Promise.all([import(AGRUN_URL), import(STORAGE_URL)]);
  return modules;
}

/** What the element's attributes ask for. */
export function readConfig(element) {
  const storage = element.getAttribute('storage') ?? 'indexeddb';
  if (!['indexeddb', 'memory', 'none'].includes(storage)) {
    throw new TypeError(`<agrun-chat storage="${storage}">: use indexeddb, memory or none`);
  }
  return {
    sessionId: element.getAttribute('session-id') || undefined,
    storage,
    dbName: element.getAttribute('db-name') || undefined,
    globalMemory: element.getAttribute('global-memory') !== 'off',
  };
}

export class RuntimeFactory {
  #store = null;
  #storeKey = null;
  #events;

  /** @param {{ onStorageDegraded: Function, onStorageRestored: Function, onDataLoss: Function }} events */
  constructor(events) {
    this.#events = events;
  }

  /**
   * A new runtime for `config` with `provider` (undefined: skills only) and the page's extra
   * createRuntime `options`; the widget's own options win over the page's.
   */
  async create(config, { provider, globalMemory, options, onProgress }) {
    const [agrun, stores] = await loadAgrun();
    return agrun.createRuntime({
      ...options,
      ...(config.sessionId ? { sessionId: config.sessionId } : {}),
      storage: this.#storeFor(config, stores),
      globalMemory: { enabled: globalMemory },
      ...(provider ? { provider } : {}),
      onProgress,
    });
  }

  #storeFor({ storage, dbName }, stores) {
    const key = `${storage}:${dbName ?? ''}`;
    if (key !== this.#storeKey) {
      this.#storeKey = key;
      this.#store = {
        none: () => false,
        memory: () => stores.createMemorySessionStore(),
        indexeddb: () => stores.createSessionStore({ dbName, ...this.#events }),
      }[storage]();
    }
    return this.#store;
  }
}

// A choice the person made, kept in localStorage when the session is stored in IndexedDB
// (a choice should outlive a reload as the conversation does); null when never made.
export function rememberedChoice(keyOf, { encode, decode }) {
  return {
    read(config) {
      if (config.storage !== 'indexeddb') return null;
      try {
        const value = globalThis.localStorage?.getItem(keyOf(config));
        return value === null || value === undefined ? null : decode(value);
      } catch {
        return null; // storage refused (a sandboxed frame), or a value this version cannot read
      }
    },
    write(config, value) {
      if (config.storage !== 'indexeddb') return;
      try {
        globalThis.localStorage?.setItem(keyOf(config), encode(value));
      } catch {
        // Not remembered: the choice still holds for this page.
      }
    },
  };
}

/** Whether the person turned global memory off, per database. */
export const globalMemoryChoice = rememberedChoice(
  ({ dbName }) => `agrun-chat:global-memory:${dbName ?? 'agrun'}`,
  { encode: (enabled) => (enabled ? 'on' : 'off'), decode: (value) => value === 'on' },
);

// The settings a model choice is made of; never an API key.
const MODEL_FIELDS = ['kind', 'modelUrl', 'localUrl', 'localModel', 'hostedUrl', 'hostedModel'];

/** Where answers come from, per widget (database and session): the settings without a key. */
export const modelChoice = rememberedChoice(
  ({ dbName, sessionId }) => `agrun-chat:model:${dbName ?? 'agrun'}:${sessionId ?? 'default'}`,
  {
    encode: (settings) => JSON.stringify(Object.fromEntries(MODEL_FIELDS.map((name) => [name, settings[name] ?? '']))),
    decode: (value) => {
      const parsed = JSON.parse(value);
      return Object.fromEntries(MODEL_FIELDS.map((name) => [name, String(parsed?.[name] ?? '')]));
    },
  },
);
