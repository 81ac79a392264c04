// Types of agrun's session stores (web/storage.js, modules in web/storage/).
// The records are the camelCase twins of the Python port's (agrun.storage).
import { AgrunError } from './agrun';

export type JsonObject = { [key: string]: unknown };

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
}

export interface RuntimeState {
  lastRun: JsonObject | null;
}

export interface SessionStore {
  /** 'indexeddb', 'memory' or 'resilient'. */
  readonly kind: string;
  /** The IndexedDB database name (IndexedDB stores only). */
  readonly dbName?: string;
  /**
   * Write one turn in one transaction; resolves to its seq. The store numbers the turn's
   * memory entries (`seq`) after those the session holds, so they stay unique on disk.
   */
  commitTurn(commit: TurnCommit): Promise<number>;
  /** Committed data only; null for a session never committed. */
  loadSession(sessionId: string): Promise<SessionSnapshot | null>;
  listSessions(): Promise<SessionInfo[]>;
  /** One session's line, or null: what a runtime checks at each turn start. */
  sessionInfo(sessionId: string): Promise<SessionInfo | null>;
  readGlobalMemory(): Promise<JsonObject[]>;
  appendGlobalMemory(entries: JsonObject[]): Promise<void>;
  readRuntimeState(): Promise<RuntimeState>;
  /** Rejects with SessionNotFoundError. */
  exportSession(sessionId: string): Promise<string>;
  /** Rejects with ImportRejectedError and changes nothing. Resolves to the session id. */
  importSession(jsonText: string, options?: { replace?: boolean }): Promise<string>;
  close(): Promise<void>;
}

export interface StorageDegradedEvent {
  /** The error's name (e.g. 'QuotaExceededError', 'SchemaTooNew') or its `reason`. */
  reason: string;
  /** The store method the host called when the store failed. */
  method: string;
  error: unknown;
}

export interface StorageStatus {
  degraded: boolean;
  backend: string;
  reason: string | null;
  method: string | null;
  /** Commits made on the fallback since the degrade, merged back if the primary returns. */
  unsynced: number;
}

export interface ResilientOptions {
  /** Fired once, when the store switches to its fallback. Errors it throws are reported, not thrown. */
  onStorageDegraded?: (event: StorageDegradedEvent) => void;
  /** Fired when a reopened primary took the unsynced commits back and the store returned to it. */
  onStorageRestored?: (event: { merged: number }) => void;
  /** Where to go on a fatal error; defaults to an in-memory store. */
  fallback?: SessionStore;
  /** Makes a new primary, tried at a turn start while degraded (never after a deletion). */
  reopen?: () => SessionStore;
  /** Least time between two reopen attempts (default 2000 ms). */
  retryAfterMs?: number;
  isFatal?: (error: unknown) => boolean;
}

export interface ResilientSessionStore extends SessionStore {
  isDegraded(): boolean;
  status(): StorageStatus;
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
  fallback?: SessionStore;
}

export interface PageSessionStore extends ResilientSessionStore {
  /** Hold this session's turn lock (Web Locks) while `fn` runs: load, run, commit. */
  withSessionLock<T>(sessionId: string, fn: () => Promise<T> | T): Promise<T>;
}

export declare function createSessionStore(options?: SessionStoreOptions): PageSessionStore;
export declare function createIndexedDbSessionStore(options?: Omit<SessionStoreOptions, 'onStorageDegraded' | 'fallback'>): SessionStore;
export declare function createMemorySessionStore(options?: { maxImportBytes?: number }): SessionStore;
export declare function createResilientSessionStore(primary: SessionStore, options?: ResilientOptions): ResilientSessionStore;
export declare function withSessionLock<T>(sessionId: string, fn: () => Promise<T> | T): Promise<T>;
export declare function isFatalStorageError(error: unknown): boolean;
export declare const FATAL_ERROR_NAMES: ReadonlySet<string>;
export declare const SCHEMA_VERSION: number;
export declare const FORMAT_VERSION: number;
export declare const EXPORT_FORMAT: 'agrun.session';
export declare const DEFAULT_DB_NAME: string;
/** Every method a session store must have. */
export declare const STORE_METHODS: readonly string[];
export declare const MAX_ID_LENGTH: number;

export declare class StorageError extends AgrunError {
  fatal: boolean;
  reason?: string;
}
export declare class StorageOpenError extends StorageError {}
export declare class SchemaTooNewError extends StorageError {
  found: number;
  known: number;
}
export declare class SessionNotFoundError extends StorageError {
  sessionId: string;
}
export declare class ImportRejectedError extends StorageError {}
export declare class StorageClosedError extends StorageError {}
