// Types of agrun's session stores (web/storage.js, modules in web/storage/).
// The records are the camelCase twins of the Python port's (agrun.storage). A store keeps
// them opaque (JSON objects); the runtime checks what it reads back with its own models.
import type { AgrunError, AgrunErrorOptions, JsonObject } from './agrun';

export type { JsonObject };

/** Everything one turn changes, written as one atomic unit. */
export interface TurnCommit {
  sessionId: string;
  /** Unique within the session; committing it again returns the stored seq. */
  turnId: string;
  committedAtMs?: number | null;
  messages?: JsonObject[];
  events?: JsonObject[];
  memoryEntries?: JsonObject[];
  /** The rebuilt snapshot; null or absent leaves the stored one. */
  sessionMemory?: JsonObject | null;
  inquiry?: JsonObject | null;
  /** Upserted by their `ref`. */
  contentEntries?: Array<JsonObject & { ref: string }>;
  evictedContentRefs?: string[];
  lastRun?: JsonObject | null;
  /** Promotions to global memory. */
  globalMemory?: JsonObject[];
}

export interface StoredTurn {
  seq: number;
  turnId: string;
  committedAtMs: number | null;
  messages: JsonObject[];
  events: JsonObject[];
  memoryEntries: JsonObject[];
}

/** Everything stored for one session, turns in commit order (seq 1..n). */
export interface SessionSnapshot {
  sessionId: string;
  turns: StoredTurn[];
  sessionMemory: JsonObject | null;
  inquiry: JsonObject | null;
  /** Ordered by ref. */
  contentEntries: Array<JsonObject & { ref: string }>;
  lastRun: JsonObject | null;
}

export interface SessionInfo {
  sessionId: string;
  turnCount: number;
  lastCommittedAtMs: number | null;
  /** What a person named the conversation (renameSession); null until then. */
  title: string | null;
}

export interface RuntimeState {
  lastRun: JsonObject | null;
}

export interface LoadOptions {
  /** false: only the last turn's events (what a resume needs); default true. */
  allEvents?: boolean;
}

/**
 * A session store: what createRuntime's `storage` option takes (every method of
 * `STORE_METHODS`; createRuntime names the ones a page's own store lacks).
 */
export interface SessionStore {
  /** 'indexeddb', 'memory' or 'resilient' for agrun's own stores. */
  readonly kind?: string;
  /**
   * Write one turn in one transaction; resolves to its seq. The store numbers the turn's
   * memory entries (`seq`) after those the session holds, so they stay unique on disk.
   */
  commitTurn(commit: TurnCommit): Promise<number>;
  /** Committed data only; null for a session never committed. */
  loadSession(sessionId: string, options?: LoadOptions): Promise<SessionSnapshot | null>;
  listSessions(): Promise<SessionInfo[]>;
  /** One session's line, or null: what a runtime checks at each turn start. */
  sessionInfo(sessionId: string): Promise<SessionInfo | null>;
  /** Store `title` with the session (null removes it); a session not stored yet is stored with no turns. */
  renameSession(sessionId: string, title: string | null): Promise<void>;
  /**
   * Remove what the session's turns stored (turns, messages, events, memory entries, session
   * memory, inquiry, content, lastRun); the session stays under its id and title, with no
   * turns. Global memory stays. Resolves to whether the session was stored.
   */
  clearSession(sessionId: string): Promise<boolean>;
  /** Remove the session entirely, title included (global memory stays); whether it was stored. */
  deleteSession(sessionId: string): Promise<boolean>;
  readGlobalMemory(): Promise<JsonObject[]>;
  appendGlobalMemory(entries: JsonObject[]): Promise<void>;
  readRuntimeState(): Promise<RuntimeState>;
  /** Rejects with SessionNotFoundError. */
  exportSession(sessionId: string): Promise<string>;
  /** Rejects with ImportRejectedError and changes nothing. Resolves to the session id. */
  importSession(jsonText: string, options?: { replace?: boolean }): Promise<string>;
  close(): Promise<void>;
  /** If present, what `storageStatus()` reports about the store (see ResilientSessionStore). */
  status?(): StoreStatus;
  /** If present, a turn runs inside it: load, run and commit under this session's lock. */
  withSessionLock?<T>(sessionId: string, fn: () => Promise<T> | T): Promise<T>;
}

export interface IndexedDbSessionStore extends SessionStore {
  readonly kind: 'indexeddb';
  readonly dbName: string;
  /** What the browser discarded when this store opened its database, or null. */
  dataLoss(): DataLossEvent | null;
}

/**
 * The browser found the site's IndexedDB damaged when it opened it, deleted it and started
 * an empty one (Chromium's IDBVersionChangeEvent.dataLoss; other browsers do not report it).
 * Every session stored before is gone. Chromium tells only the first database opened after
 * the deletion.
 */
export interface DataLossEvent {
  /** 'total' in Chromium. */
  dataLoss: string;
  /** The browser's reason, e.g. 'checksum mismatch'. */
  message: string;
}

export interface MemorySessionStore extends SessionStore {
  readonly kind: 'memory';
}

export interface StorageDegradedEvent {
  /** The error's name (e.g. 'QuotaExceededError', 'SchemaTooNew') or its `reason`. */
  reason: string;
  /** The store method the host called when the store failed. */
  method: string;
  error: unknown;
}

/** Which store answers now, and why it changed. */
export interface StoreStatus {
  degraded: boolean;
  backend: string;
  reason: string | null;
  method: string | null;
  /** Commits made on the fallback since the degrade, merged back if the primary returns. */
  unsynced: number;
  /** Every write made on the fallback since the degrade (commits, imports, global memory), replayed in order. */
  unsyncedWrites: number;
  /** What the browser discarded when the database was opened (see DataLossEvent), or null. */
  dataLoss?: DataLossEvent | null;
}

/** @deprecated the old name of `StoreStatus` (the runtime's is agrun's `StorageStatus`). */
export type StorageStatus = StoreStatus;

export interface ResilientOptions {
  /** Fired once, when the store switches to its fallback. Errors it throws are reported, not thrown. */
  onStorageDegraded?: (event: StorageDegradedEvent) => void;
  /**
   * Fired when a reopened primary took every write made on the fallback back, in order, and
   * the store returned to it: `merged` commits, `replayed` writes in all.
   */
  onStorageRestored?: (event: { merged: number; replayed: number }) => void;
  /** Where to go on a fatal error; defaults to an in-memory store. */
  fallback?: SessionStore;
  /** Makes a new primary, tried at a turn start while degraded (never after a deletion). */
  reopen?: () => SessionStore;
  /** Least time between two reopen attempts (default 2000 ms). */
  retryAfterMs?: number;
  isFatal?: (error: unknown) => boolean;
}

export interface ResilientSessionStore extends SessionStore {
  readonly kind: 'resilient';
  isDegraded(): boolean;
  status(): StoreStatus;
}

export interface SessionStoreOptions {
  /** IndexedDB database name; default 'agrun'. */
  dbName?: string;
  /** Commit durability; default 'strict' (flushed before a commit resolves). */
  durability?: 'strict' | 'relaxed' | 'default';
  /** Largest export file importSession takes; default 64 MiB. */
  maxImportBytes?: number;
  onStorageDegraded?: ResilientOptions['onStorageDegraded'];
  onStorageRestored?: ResilientOptions['onStorageRestored'];
  /** Fired when the browser reports, on opening the database, that it discarded it (see DataLossEvent). */
  onDataLoss?: (event: DataLossEvent) => void;
  fallback?: SessionStore;
}

export interface PageSessionStore extends ResilientSessionStore {
  /** Hold this session's turn lock (Web Locks) while `fn` runs: load, run, commit. */
  withSessionLock<T>(sessionId: string, fn: () => Promise<T> | T): Promise<T>;
}

/** The store a page uses: IndexedDB, falling back to memory on a fatal error. */
export declare function createSessionStore(options?: SessionStoreOptions): PageSessionStore;
export declare function createIndexedDbSessionStore(
  options?: Pick<SessionStoreOptions, 'dbName' | 'durability' | 'maxImportBytes' | 'onDataLoss'>,
): IndexedDbSessionStore;
export declare function createMemorySessionStore(options?: { maxImportBytes?: number }): MemorySessionStore;
export declare function createResilientSessionStore(primary: SessionStore, options?: ResilientOptions): ResilientSessionStore;
/**
 * Run `fn` while holding this session's turn lock (Web Locks), so two tabs take turns on one
 * session. Without Web Locks, `fn` just runs.
 */
export declare function withSessionLock<T>(sessionId: string, fn: () => Promise<T> | T): Promise<T>;
/** Whether `error` means the store cannot be used any more. */
export declare function isFatalStorageError(error: unknown): boolean;
export declare const FATAL_ERROR_NAMES: ReadonlySet<string>;
export declare const SCHEMA_VERSION: number;
export declare const FORMAT_VERSION: number;
export declare const EXPORT_FORMAT: 'agrun.session';
export declare const DEFAULT_DB_NAME: string;
/** Every method a session store must have. */
export declare const STORE_METHODS: readonly string[];
export declare const MAX_ID_LENGTH: number;

export interface StorageErrorOptions extends AgrunErrorOptions {
  fatal?: boolean;
  reason?: string;
}

/** Persistence failed (code 'storage_error' unless a subclass says). `fatal` errors make the resilient store switch to memory. */
export declare class StorageError extends AgrunError {
  constructor(message: string, options?: StorageErrorOptions);
  fatal: boolean;
  reason?: string;
}
/** The database could not be opened at all (code 'storage_open_failed', fatal). */
export declare class StorageOpenError extends StorageError {
  constructor(message: string, options?: { cause?: unknown; reason?: string });
}
/** The database was written by a newer agrun; it is left untouched (code 'storage_schema_too_new', name 'SchemaTooNew'). */
export declare class SchemaTooNewError extends StorageError {
  constructor(found: number, known: number, where: string);
  found: number;
  known: number;
}
/** No session is stored under that id (code 'session_not_found', name 'SessionNotFound'). */
export declare class SessionNotFoundError extends StorageError {
  constructor(sessionId: string);
  sessionId: string;
}
/** An export file was corrupt, hostile or of an unknown version; nothing changed (code 'import_rejected'). */
export declare class ImportRejectedError extends StorageError {
  constructor(message: string);
}
/**
 * The resilient store runs on its in-memory fallback and refuses a write it could not replay
 * safely once the database is back: an import without `replace` (code 'storage_degraded');
 * nothing changed.
 */
export declare class StorageDegradedError extends StorageError {
  constructor(message: string);
}
/** The store was closed; create a new one (code 'storage_closed'). */
export declare class StorageClosedError extends StorageError {
  constructor(what: string);
}
