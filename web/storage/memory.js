// An in-memory session store with the IndexedDB store's API: for tests, and the fallback the
// resilient store switches to. Everything goes in and out as a JSON copy.
import {
  ImportRejectedError,
  MAX_IMPORT_BYTES,
  SessionNotFoundError,
  StorageClosedError,
  checkTitle,
  dumpExport,
  lastCommittedAt,
  normalizeCommit,
  normalizeEntries,
  numberMemory,
  parseExport,
  sessionSnapshot,
} from './records.js';

// Seeds a memory store with a snapshot another store already validated (the resilient
// store's mirror), skipping the export file's JSON round trip.
export const RESTORE = Symbol('agrun.storage.restore');

const copy = (value) => (value == null ? null : JSON.parse(JSON.stringify(value)));

const emptySession = (title = null) => ({
  turns: [],
  turnIds: new Map(),
  sessionMemory: null,
  inquiry: null,
  content: new Map(),
  lastRun: null,
  lastCommittedAtMs: null,
  memoryCount: 0,
  title,
});

const infoOf = (sessionId, s) => ({
  sessionId,
  turnCount: s.turns.length,
  lastCommittedAtMs: s.lastCommittedAtMs,
  title: s.title ?? null,
});

/**
 * @param {{ maxImportBytes?: number }} [options]
 * @returns {import('../storage').SessionStore & { [RESTORE]: (snapshot: object) => void }}
 */
export function createMemorySessionStore({ maxImportBytes = MAX_IMPORT_BYTES } = {}) {
  // sessionId -> { turns, turnIds, sessionMemory, inquiry, content, lastRun, lastCommittedAtMs }
  const sessions = new Map();
  const globalMemory = [];
  let lastRun = null;
  let closed = false;

  const open = () => {
    if (closed) throw new StorageClosedError('memory session store');
  };

  return {
    kind: 'memory',

    async commitTurn(commit) {
      open();
      const c = normalizeCommit(commit);
      const old = sessions.get(c.sessionId);
      if (old?.turnIds.has(c.turnId)) return old.turnIds.get(c.turnId);
      const session = old ?? emptySession();
      const seq = session.turns.length + 1;
      const memoryEntries = numberMemory(c.memoryEntries, session.memoryCount ?? 0);
      // Nothing below throws: the turn lands whole.
      session.turns.push({
        seq,
        turnId: c.turnId,
        committedAtMs: c.committedAtMs,
        messages: c.messages,
        events: c.events,
        memoryEntries,
      });
      session.memoryCount = (session.memoryCount ?? 0) + memoryEntries.length;
      session.turnIds.set(c.turnId, seq);
      for (const ref of c.evictedContentRefs) session.content.delete(ref);
      for (const entry of c.contentEntries) session.content.set(entry.ref, entry);
      session.sessionMemory = c.sessionMemory ?? session.sessionMemory;
      session.inquiry = c.inquiry ?? session.inquiry;
      if (c.lastRun !== null) session.lastRun = lastRun = c.lastRun;
      session.lastCommittedAtMs = c.committedAtMs ?? session.lastCommittedAtMs;
      globalMemory.push(...c.globalMemory);
      sessions.set(c.sessionId, session);
      return seq;
    },

    async loadSession(sessionId, { allEvents = true } = {}) {
      open();
      const s = sessions.get(sessionId);
      if (!s) return null;
      const refs = [...s.content.keys()].sort();
      const last = s.turns.length;
      const turns = allEvents ? s.turns : s.turns.map((t) => (t.seq === last ? t : { ...t, events: [] }));
      return copy(
        sessionSnapshot({ ...s, turns, sessionId, contentEntries: refs.map((ref) => s.content.get(ref)) }),
      );
    },

    async sessionInfo(sessionId) {
      open();
      const s = sessions.get(sessionId);
      return s ? infoOf(sessionId, s) : null;
    },

    async listSessions() {
      open();
      return [...sessions.keys()].sort().map((sessionId) => infoOf(sessionId, sessions.get(sessionId)));
    },

    async renameSession(sessionId, title) {
      open();
      checkTitle(sessionId, title);
      if (!sessions.has(sessionId)) sessions.set(sessionId, emptySession());
      sessions.get(sessionId).title = title;
    },

    async clearSession(sessionId) {
      open();
      const s = sessions.get(sessionId);
      if (s) sessions.set(sessionId, emptySession(s.title ?? null));
      return Boolean(s);
    },

    async deleteSession(sessionId) {
      open();
      return sessions.delete(sessionId);
    },

    async readGlobalMemory() {
      open();
      return copy(globalMemory);
    },

    async appendGlobalMemory(entries) {
      open();
      globalMemory.push(...normalizeEntries(entries, 'global memory entries'));
    },

    async readRuntimeState() {
      open();
      return { lastRun: copy(lastRun) };
    },

    async exportSession(sessionId) {
      const snapshot = await this.loadSession(sessionId);
      if (!snapshot) throw new SessionNotFoundError(sessionId);
      return dumpExport(snapshot);
    },

    async importSession(text, { replace = false } = {}) {
      open();
      const s = parseExport(text, { maxBytes: maxImportBytes });
      if (sessions.has(s.sessionId) && !replace) {
        throw new ImportRejectedError(
          `session ${JSON.stringify(s.sessionId)} is already stored: pass { replace: true } to overwrite it`,
        );
      }
      this[RESTORE](s);
      return s.sessionId;
    },

    [RESTORE](snapshot) {
      open();
      const s = structuredClone(snapshot);
      // An export file carries no title: a replaced session keeps the one it had.
      sessions.set(s.sessionId, {
        title: sessions.get(s.sessionId)?.title ?? null,
        turns: s.turns,
        turnIds: new Map(s.turns.map((t) => [t.turnId, t.seq])),
        sessionMemory: s.sessionMemory,
        inquiry: s.inquiry,
        content: new Map(s.contentEntries.map((e) => [e.ref, e])),
        lastRun: s.lastRun,
        lastCommittedAtMs: lastCommittedAt(s),
        memoryCount: s.turns.reduce((n, t) => n + t.memoryEntries.length, 0),
      });
    },

    async close() {
      closed = true;
    },
  };
}
