// The records agrun's session stores take and give, camelCase twins of the Python port's
// (py/agrun/storage/_records.py), and the careful reading of an export file.
import { AgrunConfigError, AgrunError } from '../errors.js';
import { findNonPlain } from '../plain.js';
import { schemaProblem } from './schema.js';
import { SCHEMAS } from './schemas.js';

export const FORMAT_VERSION = 1;
export const EXPORT_FORMAT = 'agrun.session';
export const MAX_IMPORT_BYTES = 64 * 1024 * 1024;
export const MAX_DEPTH = 64;
export const MAX_ID_LENGTH = 256;

/** Every method a session store has (what createRuntime checks a page's own store for). */
export const STORE_METHODS = [
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
  'close',
];

/** Persistence failed. `fatal` errors make the resilient store switch to memory. */
export class StorageError extends AgrunError {
  /**
   * @param {string} message what failed and what to do
   * @param {{ code?: string, cause?: unknown, fatal?: boolean, reason?: string }} [options]
   */
  constructor(message, { code = 'storage_error', cause, fatal = false, reason } = {}) {
    super(message, { code, cause });
    this.name = 'StorageError';
    this.fatal = fatal;
    if (reason !== undefined) this.reason = reason;
  }
}

/** The database could not be opened at all (blocked by the browser, broken, missing). */
export class StorageOpenError extends StorageError {
  /** @param {string} message @param {{ cause?: unknown, reason?: string }} [options] */
  constructor(message, { cause, reason } = {}) {
    super(message, { code: 'storage_open_failed', cause, fatal: true, reason });
    this.name = 'StorageOpenError';
  }
}

/** The database was written by a newer agrun; it is refused and left untouched. */
export class SchemaTooNewError extends StorageError {
  constructor(found, known, where) {
    super(
      `${where} has schema version ${found}, but this agrun knows only up to ${known}; ` +
        'upgrade agrun or use another database name (the data was left untouched)',
      { code: 'storage_schema_too_new', fatal: true, reason: 'SchemaTooNew' },
    );
    this.name = 'SchemaTooNew';
    this.found = found;
    this.known = known;
  }
}

/** No session is stored under the id asked for. */
export class SessionNotFoundError extends StorageError {
  constructor(sessionId) {
    super(`no stored session ${JSON.stringify(sessionId)}: listSessions() shows what is stored`, {
      code: 'session_not_found',
    });
    this.name = 'SessionNotFound';
    this.sessionId = sessionId;
  }
}

/** An export file was corrupt, hostile or of an unknown version; nothing was changed. */
export class ImportRejectedError extends StorageError {
  constructor(message) {
    super(message, { code: 'import_rejected' });
    this.name = 'ImportRejected';
  }
}

/**
 * A write the resilient store cannot take while it is degraded to memory, because it could
 * not be replayed safely once the database is back; nothing was changed.
 */
export class StorageDegradedError extends StorageError {
  constructor(message) {
    super(message, { code: 'storage_degraded' });
    this.name = 'StorageDegraded';
  }
}

/** The store was closed; create a new one. */
export class StorageClosedError extends StorageError {
  constructor(what) {
    super(`this ${what} was closed: create a new store`, { code: 'storage_closed' });
    this.name = 'StorageClosed';
  }
}

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON-only deep copy; refuses what JSON cannot carry instead of silently changing it. */
export function jsonCopy(value, what) {
  const problem = findNonPlain(value);
  if (problem) throw new AgrunConfigError(`${what} is not plain JSON data: ${problem}`);
  return JSON.parse(JSON.stringify(value));
}

function checkId(value, what, Error_ = AgrunConfigError) {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ID_LENGTH) {
    throw new Error_(
      `${what} must be a string of 1 to ${MAX_ID_LENGTH} characters, got ${JSON.stringify(value)}`,
    );
  }
}

function checkObjects(list, what, Error_ = AgrunConfigError) {
  if (!Array.isArray(list) || !list.every(isObject)) {
    throw new Error_(`${what} must be a list of plain objects`);
  }
}

function checkRefs(entries, what, Error_ = AgrunConfigError) {
  for (const entry of entries) {
    if (typeof entry.ref !== 'string' || entry.ref.length === 0) {
      throw new Error_(
        `${what}: a content entry needs a non-empty string "ref", got ${JSON.stringify(entry.ref)}`,
      );
    }
  }
}

/** A JSON copy of a list of plain objects (global memory entries). */
export function normalizeEntries(entries, what) {
  const copy = jsonCopy(entries, what);
  checkObjects(copy, what);
  return copy;
}

/** The id and title renameSession() takes: an id, and a string or null. */
export function checkTitle(sessionId, title) {
  checkId(sessionId, 'renameSession(): the session id');
  if (title !== null && typeof title !== 'string') {
    throw new AgrunConfigError(`renameSession(): a title is a string or null, got ${typeof title}`);
  }
}

const COMMIT_LISTS = ['messages', 'events', 'memoryEntries', 'contentEntries', 'globalMemory'];
const COMMIT_SNAPSHOTS = ['sessionMemory', 'inquiry', 'lastRun'];

/**
 * Check a turn commit and return a JSON copy with every field present.
 * @throws {AgrunConfigError} a field is missing, of the wrong type, or not JSON data
 */
export function normalizeCommit(commit) {
  if (!isObject(commit)) throw new AgrunConfigError('commitTurn() takes a turn commit object');
  const copy = jsonCopy(commit, 'the turn commit');
  checkId(copy.sessionId, 'commit.sessionId');
  checkId(copy.turnId, 'commit.turnId');
  if (copy.committedAtMs != null && !Number.isInteger(copy.committedAtMs)) {
    throw new AgrunConfigError('commit.committedAtMs must be an integer (milliseconds) or null');
  }
  for (const name of COMMIT_LISTS) {
    copy[name] ??= [];
    checkObjects(copy[name], `commit.${name}`);
  }
  copy.evictedContentRefs ??= [];
  if (!Array.isArray(copy.evictedContentRefs))
    throw new AgrunConfigError('commit.evictedContentRefs must be a list');
  copy.evictedContentRefs.forEach((ref) => checkId(ref, 'an evicted content ref'));
  for (const name of COMMIT_SNAPSHOTS) {
    copy[name] ??= null;
    if (copy[name] !== null && !isObject(copy[name])) {
      throw new AgrunConfigError(`commit.${name} must be a plain object or null`);
    }
  }
  copy.committedAtMs ??= null;
  checkRefs(copy.contentEntries, 'commit.contentEntries');
  return copy;
}

/**
 * Memory entries of a commit numbered after the `stored` ones the session holds: the store
 * knows an entry's place in the session's memory log, so seqs on disk stay unique and
 * gapless whoever committed first (another tab, a turn kept pending).
 */
export function numberMemory(entries, stored) {
  return entries.map((entry, offset) => ({ ...entry, seq: stored + offset + 1 }));
}

/**
 * How deep the arrays and objects of JSON `text` nest, found without parsing it (strings
 * skipped whole): the bound checked before any recursive parse sees the text.
 */
export function jsonDepth(text) {
  let depth = 0;
  let deepest = 0;
  for (const [token] of text.matchAll(/"(?:[^"\\]|\\.)*"|[[\]{}]/g)) {
    if (token === '[' || token === '{') {
      depth += 1;
      if (depth > deepest) deepest = depth;
    } else if (token === ']' || token === '}') {
      depth -= 1;
    }
  }
  return deepest;
}

/** A stored turn in its canonical key order. */
export const storedTurn = (t) => ({
  seq: t.seq,
  turnId: t.turnId,
  committedAtMs: t.committedAtMs ?? null,
  messages: t.messages,
  events: t.events,
  memoryEntries: t.memoryEntries,
});

/** A session snapshot in its canonical key order. */
export const sessionSnapshot = (s) => ({
  sessionId: s.sessionId,
  turns: s.turns.map(storedTurn),
  sessionMemory: s.sessionMemory ?? null,
  inquiry: s.inquiry ?? null,
  contentEntries: s.contentEntries,
  lastRun: s.lastRun ?? null,
});

/** The latest non-null commit time of a snapshot's turns. */
export function lastCommittedAt(snapshot) {
  for (let i = snapshot.turns.length - 1; i >= 0; i -= 1) {
    if (snapshot.turns[i].committedAtMs != null) return snapshot.turns[i].committedAtMs;
  }
  return null;
}

/** The export file for one session (same bytes as the Python port writes). */
export function dumpExport(snapshot) {
  return JSON.stringify({
    format: EXPORT_FORMAT,
    formatVersion: FORMAT_VERSION,
    session: sessionSnapshot(snapshot),
  });
}

const SESSION_KEYS = new Set(['sessionId', 'turns', 'sessionMemory', 'inquiry', 'contentEntries', 'lastRun']);
const TURN_KEYS = new Set(['seq', 'turnId', 'committedAtMs', 'messages', 'events', 'memoryEntries']);
const ENVELOPE_KEYS = new Set(['format', 'formatVersion', 'session']);

function reject(message) {
  throw new ImportRejectedError(message);
}

function onlyKeys(object, allowed, where) {
  for (const key of Object.keys(object)) {
    if (!allowed.has(key)) reject(`export file is invalid: ${where}.${key}: unknown field`);
  }
}

function checkDepth(data) {
  const stack = [[data, 1]];
  while (stack.length) {
    const [value, depth] = stack.pop();
    if (depth > MAX_DEPTH) reject(`export file nests deeper than ${MAX_DEPTH} levels`);
    if (typeof value === 'object' && value !== null) {
      for (const item of Object.values(value)) stack.push([item, depth + 1]);
    }
  }
}

function checkUnique(values, what) {
  const seen = new Set();
  for (const value of values) {
    const key = typeof value === 'string' || typeof value === 'number' ? value : JSON.stringify(value);
    if (seen.has(key)) reject(`export file is invalid: duplicated ${what} ${JSON.stringify(value)}`);
    seen.add(key);
  }
}

// Every record is checked with the schema of the model the runtime reads it back with, so
// a file the store accepts is one the runtime can resume (never a bricked session).
function checkRecords(turns, lastRun) {
  const records = { messages: SCHEMAS.message, memoryEntries: SCHEMAS.memoryEntry };
  turns.forEach((turn, index) => {
    for (const [name, schema] of Object.entries(records)) {
      turn[name].forEach((record, position) => {
        const problem = schemaProblem(schema, record);
        if (problem) reject(`export file holds records agrun cannot read: turn ${index + 1} ${name}[${position}].${problem}`);
      });
    }
    turn.events.forEach((event, position) => {
      if (!Number.isInteger(event.seq) || event.seq < 1 || typeof event.kind !== 'string')
        reject(`export file holds records agrun cannot read: turn ${index + 1} events[${position}]: needs an integer seq and a kind`);
    });
  });
  if (lastRun != null) {
    const problem = schemaProblem(SCHEMAS.lastRun, lastRun);
    if (problem) reject(`export file holds records agrun cannot read: lastRun.${problem}`);
  }
}

/**
 * Read an export file; trust nothing in it. Stores keep payloads opaque; with `records`
 * (what the runtime's importSession asks for), every message, memory entry and lastRun is
 * also checked against the model the runtime reads it back with.
 * @param {string} text
 * @returns {object} a session snapshot
 * @throws {ImportRejectedError} too large, not JSON, too deep, another format or version, invalid
 */
export function parseExport(text, { maxBytes = MAX_IMPORT_BYTES, records = false } = {}) {
  if (typeof text !== 'string') reject(`an export file is JSON text, got ${typeof text}`);
  const size = text.length > maxBytes ? text.length : new TextEncoder().encode(text).length;
  if (size > maxBytes) reject(`export file is ${size} bytes, over the ${maxBytes} limit`);
  if (jsonDepth(text) > MAX_DEPTH) reject(`export file nests deeper than ${MAX_DEPTH} levels`);
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    reject(`export file is not valid JSON: ${error.message}`);
  }
  checkDepth(data);
  if (!isObject(data) || data.format !== EXPORT_FORMAT) {
    reject(`not an agrun session export (expected format ${JSON.stringify(EXPORT_FORMAT)})`);
  }
  const version = data.formatVersion;
  if (!Number.isInteger(version) || version < 1) {
    reject(`export formatVersion must be a positive integer, got ${JSON.stringify(version)}`);
  }
  if (version > FORMAT_VERSION) {
    reject(
      `export formatVersion ${version} is newer than this agrun reads (${FORMAT_VERSION}): upgrade agrun to import it`,
    );
  }
  onlyKeys(data, ENVELOPE_KEYS, '<file>');
  const session = data.session;
  if (!isObject(session)) reject('export file is invalid: session: must be an object');
  onlyKeys(session, SESSION_KEYS, 'session');
  checkId(session.sessionId, 'session.sessionId', ImportRejectedError);
  const turns = session.turns ?? [];
  if (!Array.isArray(turns)) reject('export file is invalid: session.turns: must be a list');
  turns.forEach((turn, index) => {
    const where = `session.turns.${index}`;
    if (!isObject(turn)) reject(`export file is invalid: ${where}: must be an object`);
    onlyKeys(turn, TURN_KEYS, where);
    if (turn.seq !== index + 1)
      reject(`export file is invalid: ${where}.seq is ${JSON.stringify(turn.seq)}, expected ${index + 1}`);
    checkId(turn.turnId, `${where}.turnId`, ImportRejectedError);
    if (turn.committedAtMs != null && !Number.isInteger(turn.committedAtMs))
      reject(`export file is invalid: ${where}.committedAtMs: must be an integer`);
    for (const name of ['messages', 'events', 'memoryEntries']) {
      turn[name] ??= [];
      checkObjects(turn[name], `export file is invalid: ${where}.${name}`, ImportRejectedError);
    }
  });
  checkUnique(
    turns.map((t) => t.turnId),
    'turn id',
  );
  for (const name of ['messages', 'events', 'memoryEntries']) {
    checkUnique(
      turns.flatMap((t) => t[name].filter((item) => 'id' in item).map((item) => item.id)),
      `${name} id`,
    );
  }
  for (const name of ['sessionMemory', 'inquiry', 'lastRun']) {
    if (session[name] != null && !isObject(session[name]))
      reject(`export file is invalid: session.${name}: must be an object or null`);
  }
  if (records) checkRecords(turns, session.lastRun);
  const contentEntries = session.contentEntries ?? [];
  checkObjects(contentEntries, 'export file is invalid: session.contentEntries', ImportRejectedError);
  checkRefs(contentEntries, 'export file is invalid', ImportRejectedError);
  // A store's own record: checked on every import (Python's parse_session does the same),
  // so an entry of the wrong types is refused here, not reported unreadable on reopen.
  contentEntries.forEach((entry, position) => {
    const problem = schemaProblem(SCHEMAS.contentEntry, entry);
    if (problem) reject(`export file is invalid: session.contentEntries.${position}.${problem}`);
  });
  checkUnique(
    contentEntries.map((e) => e.ref),
    'content ref',
  );
  return sessionSnapshot({ ...session, turns, contentEntries });
}
