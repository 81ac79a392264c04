// The IndexedDB session store. One turn is one readwrite transaction over every store it
// touches, so a reload or crash leaves each turn whole or absent. The database opens lazily,
// upgrades step by step from whatever older agrun version wrote it, and refuses (never wipes)
// a database written by a newer one.
import {
  ImportRejectedError,
  MAX_IMPORT_BYTES,
  SchemaTooNewError,
  SessionNotFoundError,
  StorageClosedError,
  StorageOpenError,
  checkTitle,
  dumpExport,
  lastCommittedAt,
  normalizeCommit,
  normalizeEntries,
  numberMemory,
  parseExport,
  sessionSnapshot,
} from './records.js';

export const DEFAULT_DB_NAME = 'agrun';

const APPENDED = ['messages', 'events', 'memoryEntries'];
const SESSION_STORES = ['sessions', 'turns', ...APPENDED, 'sessionMemory', 'inquiry', 'content'];
const WRITE_STORES = [...SESSION_STORES, 'globalMemory', 'runtimeState'];

// Each step takes the database from version i to i + 1. Never edit a released step; add one.
export const UPGRADES = [
  // 1: sessions (turnCount, lastRun), turns, what turns append, snapshots, global memory.
  // What a turn appends is one row per store per turn ({ sessionId, seq, items }): a resume
  // reads a few thousand rows, not one per message.
  (db) => {
    db.createObjectStore('sessions', { keyPath: 'sessionId' });
    db.createObjectStore('turns', { keyPath: ['sessionId', 'seq'] }).createIndex(
      'turnId',
      ['sessionId', 'turnId'],
      { unique: true },
    );
    for (const name of APPENDED) db.createObjectStore(name, { keyPath: ['sessionId', 'seq'] });
    db.createObjectStore('sessionMemory', { keyPath: 'sessionId' });
    db.createObjectStore('inquiry', { keyPath: 'sessionId' });
    db.createObjectStore('globalMemory', { autoIncrement: true });
  },
  // 2: the content store, and runtime state, whose lastRun is backfilled from the sessions.
  (db, tx) => {
    db.createObjectStore('content', { keyPath: ['sessionId', 'ref'] });
    const runtimeState = db.createObjectStore('runtimeState');
    tx.objectStore('sessions').getAll().onsuccess = (event) => {
      const withRun = event.target.result.filter((s) => s.lastRun != null);
      withRun.sort((a, b) => (b.lastCommittedAtMs ?? -Infinity) - (a.lastCommittedAtMs ?? -Infinity));
      if (withRun.length) runtimeState.put(withRun[0].lastRun, 'lastRun');
    };
  },
];
export const SCHEMA_VERSION = UPGRADES.length;

/** Settle with a request's result or error. */
export function promisify(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

const emptyHead = (sessionId) => ({
  sessionId,
  turnCount: 0,
  memoryCount: 0,
  lastCommittedAtMs: null,
  lastRun: null,
  title: null,
});

const infoOf = (s) => ({
  sessionId: s.sessionId,
  turnCount: s.turnCount,
  lastCommittedAtMs: s.lastCommittedAtMs ?? null,
  title: s.title ?? null,
});

const sessionRange = (sessionId) => IDBKeyRange.bound([sessionId], [sessionId, []]);

// `onDataLoss` hears Chromium's IDBVersionChangeEvent.dataLoss: set when the browser found
// the site's IndexedDB damaged on open (e.g. a LevelDB log torn by a killed browser) and
// deleted it, so this database starts again empty. Other browsers do not have the field.
function openDatabase(name, onDataLoss) {
  return new Promise((resolve, reject) => {
    let request;
    try {
      request = indexedDB.open(name, SCHEMA_VERSION);
    } catch (error) {
      reject(error);
      return;
    }
    request.onupgradeneeded = (event) => {
      if (event.dataLoss && event.dataLoss !== 'none') {
        onDataLoss({ dataLoss: event.dataLoss, message: event.dataLossMessage ?? '' });
      }
      for (let v = event.oldVersion; v < SCHEMA_VERSION; v += 1)
        UPGRADES[v](request.result, request.transaction);
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
    // onblocked: another tab holds an older version open; it closes on `versionchange`, then we proceed.
  });
}

/** The version a database is at, without upgrading it. */
async function versionOf(name) {
  const db = await promisify(indexedDB.open(name));
  const { version } = db;
  db.close();
  return version;
}

/**
 * A session store in IndexedDB.
 * @param {{ dbName?: string, maxImportBytes?: number, durability?: 'strict' | 'relaxed' | 'default',
 *   onDataLoss?: (event: import('../storage').DataLossEvent) => void }} [options]
 * @returns {import('../storage').SessionStore}
 */
export function createIndexedDbSessionStore({
  dbName = DEFAULT_DB_NAME,
  maxImportBytes = MAX_IMPORT_BYTES,
  durability = 'strict',
  onDataLoss,
} = {}) {
  let dbPromise = null;
  let closed = false;
  // What the browser said it discarded when this store opened its database (Chromium only).
  let dataLoss = null;
  // Set when the database is deleted or its connection is taken away under the page (another
  // tab's deleteDatabase, the site's data cleared): reopening would silently start an empty
  // database, so every later call fails instead, fatally, and the resilient store falls back
  // to the memory copy of the live session and tells the page.
  let lost = null;

  function getDb() {
    if (closed) return Promise.reject(new StorageClosedError('IndexedDB session store'));
    if (lost) return Promise.reject(lost);
    dbPromise ??= (async () => {
      if (typeof indexedDB === 'undefined') {
        throw new StorageOpenError('IndexedDB is not available in this context', { reason: 'NotSupported' });
      }
      let db;
      try {
        db = await openDatabase(dbName, (event) => {
          dataLoss = event;
          try {
            onDataLoss?.(event);
          } catch (handlerError) {
            globalThis.reportError?.(handlerError);
          }
        });
      } catch (error) {
        if (error?.name === 'VersionError') {
          throw new SchemaTooNewError(
            await versionOf(dbName).catch(() => '(unknown)'),
            SCHEMA_VERSION,
            `IndexedDB database ${JSON.stringify(dbName)}`,
          );
        }
        throw new StorageOpenError(
          `IndexedDB database ${JSON.stringify(dbName)} could not be opened: ${error?.name}: ${error?.message}`,
          { cause: error, reason: error?.name ?? 'UnknownError' },
        );
      }
      db.onversionchange = (event) => {
        db.close();
        dbPromise = null;
        // A newer agrun in another tab upgrading: the next call reopens (and is refused with
        // VersionError if this page is too old). A deletion: the database is gone.
        if (event.newVersion === null) lose('DatabaseDeleted', 'the database was deleted by another tab or the site\'s data was cleared');
      };
      db.onclose = () => {
        // Only an abnormal close fires this (the browser took the connection away).
        dbPromise = null;
        lose('ConnectionLost', 'the browser closed the database connection (site data cleared?)');
      };
      return db;
    })();
    dbPromise.catch(() => {
      dbPromise = null;
    });
    return dbPromise;
  }

  function lose(reason, why) {
    lost ??= new StorageOpenError(`IndexedDB database ${JSON.stringify(dbName)} is gone: ${why}`, { reason });
    lost.fatal = true;
  }

  // Run `body(tx)` in one transaction; settle after it commits, or with what made it abort.
  async function transaction(storeNames, mode, body) {
    const db = await getDb();
    return new Promise((resolve, reject) => {
      let tx;
      try {
        tx = db.transaction(storeNames, mode, mode === 'readwrite' ? { durability } : undefined);
      } catch (error) {
        reject(error);
        return;
      }
      let result;
      let failure;
      tx.oncomplete = () => resolve(result);
      tx.onabort = () =>
        reject(failure ?? tx.error ?? new DOMException('The transaction was aborted', 'AbortError'));
      Promise.resolve()
        .then(() => body(tx))
        .then(
          (value) => {
            result = value;
          },
          (error) => {
            failure = error;
            try {
              tx.abort();
            } catch {
              // Already aborted from outside while the body was still writing: the write
              // failed (InvalidStateError, TransactionInactiveError) only because of that
              // abort, which is transient and worth a retry, not a sign of a dead database.
              reject(error instanceof DOMException ? new DOMException('The transaction was aborted while writing', 'AbortError') : error);
            }
          },
        );
    });
  }

  // With `allEvents` false, only the last turn's events are read (what a resume needs).
  async function readSession(tx, sessionId, allEvents = true) {
    const get = (name, query) => promisify(tx.objectStore(name).getAll(query));
    const head = await promisify(tx.objectStore('sessions').get(sessionId));
    const eventRange = allEvents || !head ? sessionRange(sessionId) : [sessionId, head.turnCount];
    const [turns, messages, events, memoryEntries, content, sessionMemory, inquiry] = await Promise.all(
      [
        get('turns', sessionRange(sessionId)),
        get('messages', sessionRange(sessionId)),
        get('events', eventRange),
        get('memoryEntries', sessionRange(sessionId)),
        get('content', sessionRange(sessionId)),
        promisify(tx.objectStore('sessionMemory').get(sessionId)),
        promisify(tx.objectStore('inquiry').get(sessionId)),
      ],
    );
    if (!head) return null;
    const bySeq = (rows) => new Map(rows.map((row) => [row.seq, row.items]));
    const [m, e, me] = [bySeq(messages), bySeq(events), bySeq(memoryEntries)];
    return sessionSnapshot({
      sessionId,
      turns: turns.map((t) => ({
        ...t,
        messages: m.get(t.seq) ?? [],
        events: e.get(t.seq) ?? [],
        memoryEntries: me.get(t.seq) ?? [],
      })),
      sessionMemory: sessionMemory?.value ?? null,
      inquiry: inquiry?.value ?? null,
      contentEntries: content.map((row) => row.body),
      lastRun: head.lastRun ?? null,
    });
  }

  // A session written before memoryCount was kept: count its entries once.
async function countMemory(tx, sessionId) {
  const rows = await promisify(tx.objectStore('memoryEntries').getAll(sessionRange(sessionId)));
  return rows.reduce((n, row) => n + row.items.length, 0);
}

function putAppended(tx, sessionId, seq, turn) {
    for (const name of APPENDED) {
      if (turn[name].length) tx.objectStore(name).put({ sessionId, seq, items: turn[name] });
    }
  }

  // Remove a session's turns and what they stored in one transaction; `keep` its line and title.
  function emptySession(sessionId, keep) {
    return transaction(SESSION_STORES, 'readwrite', async (tx) => {
      const head = await promisify(tx.objectStore('sessions').get(sessionId));
      if (!head) return false;
      for (const name of ['turns', ...APPENDED, 'content']) tx.objectStore(name).delete(sessionRange(sessionId));
      for (const name of ['sessionMemory', 'inquiry']) tx.objectStore(name).delete(sessionId);
      if (keep) tx.objectStore('sessions').put({ ...emptyHead(sessionId), title: head.title ?? null });
      else tx.objectStore('sessions').delete(sessionId);
      return true;
    });
  }

  return {
    kind: 'indexeddb',
    dbName,

    /** What the browser discarded when it opened the database (Chromium's dataLoss), or null. */
    dataLoss() {
      return dataLoss;
    },

    async commitTurn(commit) {
      const c = normalizeCommit(commit);
      const sid = c.sessionId;
      // One readwrite transaction over every store: the browser serializes it against every
      // other tab's, so no lock of our own is needed here (the runtime's turn lock is the one).
      return transaction(WRITE_STORES, 'readwrite', async (tx) => {
          const done = await promisify(tx.objectStore('turns').index('turnId').get([sid, c.turnId]));
          if (done) return done.seq;
          const head = await promisify(tx.objectStore('sessions').get(sid));
          const seq = (head?.turnCount ?? 0) + 1;
          const stored = head ? (head.memoryCount ?? (await countMemory(tx, sid))) : 0;
          c.memoryEntries = numberMemory(c.memoryEntries, stored);
          tx.objectStore('sessions').put({
            sessionId: sid,
            turnCount: seq,
            memoryCount: stored + c.memoryEntries.length,
            lastCommittedAtMs: c.committedAtMs ?? head?.lastCommittedAtMs ?? null,
            lastRun: c.lastRun ?? head?.lastRun ?? null,
            title: head?.title ?? null,
          });
          tx.objectStore('turns').put({
            sessionId: sid,
            seq,
            turnId: c.turnId,
            committedAtMs: c.committedAtMs,
          });
          putAppended(tx, sid, seq, c);
          if (c.sessionMemory !== null)
            tx.objectStore('sessionMemory').put({ sessionId: sid, value: c.sessionMemory });
          if (c.inquiry !== null) tx.objectStore('inquiry').put({ sessionId: sid, value: c.inquiry });
          const content = tx.objectStore('content');
          for (const ref of c.evictedContentRefs) content.delete([sid, ref]);
          for (const body of c.contentEntries) content.put({ sessionId: sid, ref: body.ref, body });
          if (c.lastRun !== null) tx.objectStore('runtimeState').put(c.lastRun, 'lastRun');
          for (const entry of c.globalMemory) tx.objectStore('globalMemory').add(entry);
          return seq;
        });
    },

    async loadSession(sessionId, { allEvents = true } = {}) {
      // A readonly transaction waits for overlapping writes, so it sees whole turns only.
      return transaction(SESSION_STORES, 'readonly', (tx) => readSession(tx, sessionId, allEvents));
    },

    async sessionInfo(sessionId) {
      return transaction(['sessions'], 'readonly', async (tx) => {
        const s = await promisify(tx.objectStore('sessions').get(sessionId));
        return s ? infoOf(s) : null;
      });
    },

    async listSessions() {
      return transaction(['sessions'], 'readonly', async (tx) =>
        (await promisify(tx.objectStore('sessions').getAll())).map(infoOf),
      );
    },

    async renameSession(sessionId, title) {
      checkTitle(sessionId, title);
      return transaction(['sessions'], 'readwrite', async (tx) => {
        const head = await promisify(tx.objectStore('sessions').get(sessionId));
        tx.objectStore('sessions').put({ ...(head ?? emptyHead(sessionId)), title });
      });
    },

    async clearSession(sessionId) {
      return emptySession(sessionId, true);
    },

    async deleteSession(sessionId) {
      return emptySession(sessionId, false);
    },

    async readGlobalMemory() {
      return transaction(['globalMemory'], 'readonly', (tx) =>
        promisify(tx.objectStore('globalMemory').getAll()),
      );
    },

    async appendGlobalMemory(entries) {
      const rows = normalizeEntries(entries, 'global memory entries');
      return transaction(['globalMemory'], 'readwrite', (tx) => {
        for (const entry of rows) tx.objectStore('globalMemory').add(entry);
      });
    },

    async readRuntimeState() {
      return transaction(['runtimeState'], 'readonly', async (tx) => ({
        lastRun: (await promisify(tx.objectStore('runtimeState').get('lastRun'))) ?? null,
      }));
    },

    async exportSession(sessionId) {
      const snapshot = await this.loadSession(sessionId);
      if (!snapshot) throw new SessionNotFoundError(sessionId);
      return dumpExport(snapshot);
    },

    async importSession(text, { replace = false } = {}) {
      const s = parseExport(text, { maxBytes: maxImportBytes });
      const sid = s.sessionId;
      await transaction(WRITE_STORES, 'readwrite', async (tx) => {
          const old = await promisify(tx.objectStore('sessions').get(sid));
          if (old && !replace) {
            throw new ImportRejectedError(
              `session ${JSON.stringify(sid)} is already stored: pass { replace: true } to overwrite it`,
            );
          }
          for (const name of ['turns', ...APPENDED, 'content'])
            tx.objectStore(name).delete(sessionRange(sid));
          tx.objectStore('sessions').put({
            sessionId: sid,
            turnCount: s.turns.length,
            memoryCount: s.turns.reduce((n, t) => n + t.memoryEntries.length, 0),
            lastCommittedAtMs: lastCommittedAt(s),
            lastRun: s.lastRun,
            // An export file carries no title: a replaced session keeps the one it had.
            title: old?.title ?? null,
          });
          for (const t of s.turns) {
            tx.objectStore('turns').put({
              sessionId: sid,
              seq: t.seq,
              turnId: t.turnId,
              committedAtMs: t.committedAtMs,
            });
            putAppended(tx, sid, t.seq, t);
          }
          for (const [name, value] of [
            ['sessionMemory', s.sessionMemory],
            ['inquiry', s.inquiry],
          ]) {
            if (value === null) tx.objectStore(name).delete(sid);
            else tx.objectStore(name).put({ sessionId: sid, value });
          }
          for (const body of s.contentEntries)
            tx.objectStore('content').put({ sessionId: sid, ref: body.ref, body });
        });
      return sid;
    },

    async close() {
      closed = true;
      const pending = dbPromise;
      dbPromise = null;
      if (pending) (await pending.catch(() => null))?.close();
    },
  };
}
