// Types of agrun's JavaScript face (web/agrun.js).

export type BootStage = 'pyodide' | 'packages' | 'runtime';

export interface BootProgress {
  stage: BootStage;
  loaded: number;
  total: number;
}

export interface RuntimeOptions {
  /** Folder of the vendored Pyodide; defaults to `pyodide/` beside agrun.js. */
  indexURL?: string;
  /** Called as boot goes on. Errors it throws are logged, never thrown. */
  onProgress?: (progress: BootProgress) => void;
}

export interface RunOptions {
  /** Aborting it cancels the run. */
  signal?: AbortSignal;
}

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface RunState {
  runId: string;
  status: RunStatus;
  stepCount: number;
  selectedSkill: string | null;
  [field: string]: unknown;
}

export interface RunResult {
  /** What the skill returned, as plain data. */
  output: unknown;
  state: RunState;
  [field: string]: unknown;
}

export interface Runtime {
  run(input: string, options?: RunOptions): Promise<RunResult>;
  close(): void;
}

export declare function createRuntime(options?: RuntimeOptions): Promise<Runtime>;

export declare class AgrunError extends Error {
  code: string;
  details?: object;
}
export declare class AgrunConfigError extends AgrunError {}
export declare class AgrunBootError extends AgrunError {}
