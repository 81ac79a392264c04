// Types of agrun's JavaScript face (web/agrun.js).
import type { SessionStore, StorageDegradedEvent } from './storage';

export type BootStage = 'pyodide' | 'packages' | 'runtime';

export interface BootProgress {
  stage: BootStage;
  loaded: number;
  total: number;
}

/** A memory entry as the runtime stores it (the canonical shape it normalizes requests to). */
export interface MemoryEntry {
  id: string;
  seq: number;
  runId: string;
  kind: string;
  text: string;
  data: Record<string, unknown>;
  createdAt: number;
  source: string;
  [field: string]: unknown;
}

/** What a skill may ask to remember; the runtime fills in the rest. */
export interface MemoryEntryRequest {
  text: string;
  kind?: string;
  data?: Record<string, unknown>;
}

export interface SkillContext {
  /** The run's state now; read-only (changing it throws a TypeError). */
  readonly state: Readonly<RunState>;
  readonly memory: { readAll(): MemoryEntry[] };
}

export interface SkillHelpers {
  /** Ask the runtime to remember an entry if the run succeeds; throws on a malformed entry. */
  appendMemory(entry: MemoryEntryRequest): MemoryEntryRequest;
  /** Ask for another OODAE cycle with the same skill (bounded by maxCycles). */
  requestCycle(reason?: string): void;
  /** Aborted when the runtime cancels this skill (timeout or the run's AbortSignal). */
  readonly signal: AbortSignal;
}

export interface Skill {
  name: string;
  description?: string;
  /** Deterministic matcher: the first skill that applies is chosen. */
  applies?: (input: string) => boolean;
  /** Returns plain data (objects, arrays, strings, finite numbers, booleans, null). */
  run(input: string, context: SkillContext, helpers: SkillHelpers): unknown | Promise<unknown>;
}

export interface RuntimeOptions {
  /** Folder of the vendored Pyodide; defaults to `pyodide/` beside agrun.js. */
  indexURL?: string;
  /** Called as boot goes on. Errors it throws are logged, never thrown. */
  onProgress?: (progress: BootProgress) => void;
  /** Every event (RunStarted, SkillSelected, ..., ContextPackBuilt), in order. */
  onEvent?: (event: { kind: string; [field: string]: unknown }) => void;
  skills?: Skill[];
  /** Name of the skill used when none is named and no matcher applies (default: 'echo'). */
  defaultSkill?: string;
  /** OODAE cycles one run may take (default 8). */
  maxCycles?: number;
  /** How long a skill may run (default 60000). */
  skillTimeoutMs?: number;
  /** The page's own token counter for context packs (default: agrun's estimator). */
  countTokens?: (text: string) => number;
  /** Which stored session to resume and extend (default 'default'; 1 to 256 characters). */
  sessionId?: string;
  /**
   * Where sessions persist: IndexedDB (default), memory only, none, or a store of your own
   * (it must have every method of `SessionStore`; createRuntime names the missing ones).
   */
  storage?: 'indexeddb' | 'memory' | false | SessionStore;
  /** IndexedDB database name (default 'agrun'; 1 to 256 characters). */
  dbName?: string;
  /**
   * Fired once if IndexedDB fails (tried twice) or the database is deleted under the page:
   * the session goes on in memory, and its new turns are kept apart (`storageStatus().unsynced`).
   */
  onStorageDegraded?: (event: StorageDegradedEvent) => void;
  /**
   * Fired when IndexedDB works again after a degrade (checked at a turn start, at most every
   * 2 s; never after a deletion): the page's unsynced turns were appended to the stored
   * session after what other tabs wrote meanwhile, and the runtime is back on it.
   */
  onStorageRestored?: (event: { merged: number }) => void;
  /** `{ enabled: false }`: global memory is neither read nor written; stored rows stay. */
  globalMemory?: { enabled: boolean };
}

export interface RunOptions {
  /** Aborting it cancels the run: run() rejects with an 'AbortError' carrying `result`. */
  signal?: AbortSignal;
  /** Run this skill instead of selecting one. */
  skill?: string;
}

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'cancelled';
export type Phase = 'observe' | 'orient' | 'decide' | 'act' | 'evaluate';

export interface RunError {
  code: string;
  message: string;
  skill: string | null;
  [field: string]: unknown;
}

export interface RunState {
  runId: string;
  status: RunStatus;
  stepCount: number;
  cycleCount: number;
  phase: Phase | null;
  selectedSkill: string | null;
  observation: Record<string, unknown> | null;
  error: RunError | null;
  oodae: { cycles: Array<Record<string, unknown>> };
  [field: string]: unknown;
}

export interface RunResult {
  /** What the skill returned, as plain data (null unless the run succeeded). */
  output: unknown;
  state: RunState;
  steps: Array<Record<string, unknown>>;
  error: RunError | null;
  events: Array<{ kind: string; [field: string]: unknown }>;
}

export interface Message {
  id: string;
  role: 'user' | 'assistant' | 'system' | 'tool';
  content: string;
  [field: string]: unknown;
}

export interface StorageStatus {
  persistent: boolean;
  sessionId: string | null;
  /** Turns held in memory whose commit has not reached the store yet. */
  pending: number;
  lastError: string | null;
  /**
   * What the last resume could not read from storage (left on disk, left out of the
   * session); `importSession(text, { replace: true })` with a good export repairs it.
   */
  unreadable: string[];
  /** The store fell back to memory: the session continues but will not survive a reload. */
  degraded: boolean;
  backend: string;
  reason?: string | null;
  method?: string | null;
  /** Turns of this page only the in-memory fallback holds (merged back if IndexedDB returns). */
  unsynced?: number;
}

/** See docs/context.md for every field. */
export type ContextRequest = Record<string, unknown>;
export interface ContextPack {
  layers: Record<string, Array<Record<string, unknown>>>;
  budgetUsed: number;
  budgetLimit: number;
  compressionMetadata: Record<string, unknown>;
  metrics: Record<string, unknown>;
  [field: string]: unknown;
}

export interface Runtime {
  /**
   * A failed run resolves (status 'failed', with `error`); an aborted one rejects. Rejects
   * with AgrunConfigError: input that is not a string or holds a lone surrogate
   * (code 'invalid_input'); a call made while a skill of this runtime is running
   * (code 'reentrant_call', also for exportSession, importSession and open); and with
   * AgrunError code 'interpreter_failed' if the interpreter dies mid-run (the session's
   * lock is released and the next createRuntime boots a fresh one).
   */
  run(input: string, options?: RunOptions): Promise<RunResult>;
  buildContext(request: ContextRequest): ContextPack;
  /** `{ lastRun }`: a small summary of the most recent run. */
  state(): { lastRun: Record<string, unknown> | null };
  memory(): MemoryEntry[];
  history(): Message[];
  storageStatus(): StorageStatus;
  /** The session as an export file (JSON text). */
  exportSession(): Promise<string>;
  /** Store an export file as this session and resume from it; rejects a bad file unchanged. */
  importSession(jsonText: string, options?: { replace?: boolean }): Promise<void>;
  /** Resume from storage again (createRuntime already did). */
  open(): Promise<void>;
  /** For tests: `{ liveProxies }`, helper proxies alive (0 between runs). */
  diagnostics(): { liveProxies: number };
  close(): void;
}

export declare function createRuntime(options?: RuntimeOptions): Promise<Runtime>;

export declare class AgrunError extends Error {
  code: string;
  details?: object;
  /** For an aborted run: the cancelled result. */
  result?: RunResult;
}
export declare class AgrunConfigError extends AgrunError {}
export declare class AgrunBootError extends AgrunError {}
