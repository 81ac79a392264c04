// Types of agrun's JavaScript face (web/agrun.js and the Runtime of web/runtime.js).
// Every result is plain JSON data: the camelCase twins of the Python models named beside each
// type (py/agrun/). tools/typecheck.sh checks these declarations against
// web/examples/example.ts with tsc --strict, and that createRuntime's and run()'s option
// lists and the Runtime's methods here are the ones agrun.js and runtime.js accept.
import type { DataLossEvent, SessionInfo, SessionStore, StorageDegradedEvent } from './storage';

// ---------------------------------------------------------------------------------------------
// Plain data

/** What JSON carries: all that crosses between a page and agrun's Python. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** What a skill sees: a read-only view, whose writes throw a TypeError. */
export type DeepReadonly<T> = T extends (infer Item)[]
  ? ReadonlyArray<DeepReadonly<Item>>
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

// ---------------------------------------------------------------------------------------------
// createRuntime's options

export type BootStage = 'pyodide' | 'packages' | 'runtime';

export interface BootProgress {
  stage: BootStage;
  loaded: number;
  total: number;
}

/** `context.state` and the rest a skill gets while it runs (web/engine/host.js). */
export interface SkillContext {
  /** The run's state now; read-only (a write throws a TypeError). */
  readonly state: DeepReadonly<RunState>;
  /** When a model called this skill as a tool: its arguments, checked against `parameters`. */
  readonly arguments: DeepReadonly<JsonObject> | null;
  readonly memory: {
    /** Every memory entry the runtime holds, oldest first (read once per run, on demand). */
    readAll(): DeepReadonly<MemoryEntry>[];
  };
  /** A stored body by its content ref; rejects with code 'content_ref_not_found'. */
  content(ref: string): Promise<DeepReadonly<ContentEntry>>;
}

/** A source a skill found or read: an id, or an id with a title. */
export type SourceInput = string | { id: string; title?: string };

export interface ClarificationOptions {
  /**
   * What the question would fill in, in a few words ('date', 'dentist'): session evidence
   * answers it only if it holds a value of that kind (a date for 'date') or names it.
   */
  missing: string;
  /** The turn can go on without it. */
  optional?: boolean;
  /** A safe value to go on with. */
  default?: JsonValue;
  /** A low-risk tool that can get the input without asking the person. */
  directTool?: string;
  options?: readonly string[];
}

/** agrun.kernel.ClarificationDecision: ask only when nothing else answers. */
export interface ClarificationDecision {
  ask: boolean;
  reason: 'optional' | 'default' | 'direct_tool' | 'evidence' | 'ask';
  /** What to go on with when not asking (the default, the tool, the evidence's text). */
  value: JsonValue;
}

export interface SkillHelpers {
  /** Aborted when the runtime cancels this skill (timeout or the run's AbortSignal). */
  readonly signal: AbortSignal;
  /**
   * Ask the runtime to remember an entry if the run succeeds; returns it as checked. Throws
   * an AgrunConfigError with code 'invalid_memory_entry' for a malformed entry.
   */
  appendMemory(entry: MemoryEntryRequest): CheckedMemoryRequest;
  /** Ask for another OODAE cycle with the same skill (bounded by maxCycles). */
  requestCycle(reason?: string): void;
  /** The sources this turn found and chose: the inquiry's, if the run succeeds. */
  noteSources(candidates: readonly SourceInput[], selected?: SourceInput | null): void;
  noteSearch(query: string): void;
  noteRead(source: SourceInput): void;
  /** Whether to put `question` to the person; clarification is a last resort. */
  askClarification(question: string, options: ClarificationOptions): Promise<ClarificationDecision>;
}

export interface Skill {
  /** Unique among the runtime's skills. */
  name: string;
  /** What the skill does; a model reads it when the skill is offered as a tool. */
  description?: string;
  /** Deterministic matcher: the first skill whose matcher returns true is chosen. */
  applies?: (input: string) => boolean;
  /** The JSON Schema of its arguments when a model calls it as a tool. */
  parameters?: JsonObject;
  /**
   * Returns plain data (objects, arrays, strings, finite numbers, booleans, null), or a
   * Promise of it; what JSON cannot carry exactly fails the run 'output_not_serializable'.
   */
  run(input: string, context: SkillContext, helpers: SkillHelpers): unknown;
}

/** What `execute` gets beside its arguments: the skill's view, its helpers, and their signal. */
export interface ToolExecuteContext extends SkillContext {
  readonly helpers: SkillHelpers;
  /** Aborted when the runtime cancels this tool (timeout or the run's AbortSignal). */
  readonly abortSignal: AbortSignal;
}

/** A tool the Vercel AI SDK way; `tool()` makes it a skill. */
export interface ToolDefinition<Args = JsonObject> {
  /** Unique among the runtime's skills: 1-64 letters, digits, '_' or '-'. */
  name: string;
  /** What the tool does, for the model. */
  description?: string;
  /** The JSON Schema (type 'object') of its arguments; a model's are checked against it. */
  inputSchema: JsonObject;
  /** Deterministic matcher, as for a skill. */
  applies?: (input: string) => boolean;
  /**
   * Called with the parsed, checked arguments (read-only); returns plain data or a Promise
   * of it. Run as a skill rather than by a model, `args` is its input read as JSON.
   */
  execute(args: DeepReadonly<Args>, context: ToolExecuteContext): unknown;
}

/** A tool a model can call, as a skill for `skills` (web/tool.js). */
export declare function tool<Args = JsonObject>(definition: ToolDefinition<Args>): Skill;

/** The test model (Python's agrun.testing.TestModel): for testing a page's tools. */
export interface TestModelProvider {
  kind: 'test';
  /** Which offered tools it calls (default 'all'). */
  callTools: 'all' | readonly string[];
  /** Its answer when there is no tool to call. */
  text?: string;
  /** Whether memoryExtraction 'auto' sends it the extraction call (default false). */
  extraction: boolean;
}

/**
 * A provider that calls every tool it is offered with the smallest arguments their schema
 * accepts, then answers with a JSON object of the results by tool name.
 */
export declare function testModel(options?: {
  callTools?: 'all' | readonly string[];
  text?: string;
  extraction?: boolean;
}): TestModelProvider;

/** A Python skill of a wheel in `packages`: 'module:attribute'. */
export type PythonSkillPath = `${string}:${string}`;

/** A wheel the page serves from its own origin, checked against its sha256 before install. */
export interface WheelPackage {
  url: string;
  /** 64 hex digits. */
  sha256: string;
}

/** How the content store bounds what it keeps (agrun.kernel.ContentLimits). */
export interface ContentStoreLimits {
  /** Default 64. */
  maxEntries?: number;
  /** Default 1,000,000. */
  maxBytes?: number;
  /** Default: no expiry. */
  ttlMs?: number | null;
  /** Keep the outputs of a model's tool calls too (default false: only replies). */
  keepToolOutputs?: boolean;
  /** Error codes whose failed outcomes are kept (their messages). */
  keepFailures?: readonly RunErrorCode[];
}

/** The page's own token counter: a whole number >= 0, synchronously. */
export type TokenCounter = (text: string) => number;
/** One score per document, in order (higher is more relevant), synchronously. */
export type Ranker = (query: string, documents: string[]) => number[];
/** The character spans of `text` to keep, `[start, end)`, ascending and disjoint. */
export type Compressor = (
  text: string,
  options: { limit: number; countTokens: TokenCounter },
) => ReadonlyArray<readonly [number, number]>;
/** `text` with its secrets replaced. */
export type Redactor = (text: string) => string;
/**
 * The page's check of what may be remembered (session evidence, global memory): `true` or a
 * reason refuses the entry; `false`, `null`, `undefined` or '' let it pass; throwing refuses.
 */
export type SensitivityFilter = (entry: JsonObject) => boolean | string | null | undefined;

/** The page's embedding model: one vector per text, in order, all of one length. */
export type EmbedderFunction = (texts: string[]) => Promise<ArrayLike<number>[]>;

/** An OpenAI-compatible server, reached with the browser's fetch. */
export interface OpenAIProviderOptions {
  kind: 'openai';
  baseUrl: `http://${string}` | `https://${string}`;
  model?: string;
  /** Sent as a bearer token; kept in Python's provider object only, never stored or logged. */
  apiKey?: string;
  /**
   * The whole call's deadline, from the request to the reply's finish, retries included;
   * past it the turn fails with `provider_timeout` (default 300000).
   */
  timeoutMs?: number;
  /**
   * The longest wait for the reply to start and for each next piece of it (text or a tool
   * call; keep-alive comments do not count); past it, `provider_timeout` (default 60000).
   */
  idleTimeoutMs?: number;
}

export interface RuntimeOptionsBase {
  /** Folder of the vendored Pyodide; defaults to `pyodide/` beside agrun.js. */
  indexURL?: string;
  /** Called as boot goes on. Errors it throws are logged, never thrown. */
  onProgress?: (progress: BootProgress) => void;
  /** Every event, in order: the runtime's and its context builds'. Errors it throws are logged. */
  onEvent?: (event: AgrunEvent) => void;
  skills?: readonly Skill[];
  /** The skill used when none is named and no matcher applies (default: 'echo'). */
  defaultSkill?: string;
  /** OODAE cycles one run may take (default 8). */
  maxCycles?: number;
  /** How long a skill may run (default 60000). */
  skillTimeoutMs?: number;
  /** Append each successful run's final observation to memory (default true). */
  rememberObservations?: boolean;
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
   * the session goes on in memory, and every write the page makes is kept apart
   * (`storageStatus().unsynced` turns, `unsyncedWrites` in all). An import without
   * `replace` is refused meanwhile (code 'storage_degraded').
   */
  onStorageDegraded?: (event: StorageDegradedEvent) => void;
  /**
   * Fired when IndexedDB works again after a degrade (checked at a turn start, at most every
   * 2 s; never after a deletion): the page's writes made meanwhile (turns, imports with
   * replace, global memory promotions and forgets) were replayed into it in order, after what
   * other tabs wrote meanwhile, and the runtime is back on it. `merged`: the turns;
   * `replayed`: every write.
   */
  onStorageRestored?: (event: { merged: number; replayed: number }) => void;
  /**
   * The browser found the site's IndexedDB damaged when it opened it and deleted it, every
   * session stored before with it (Chromium reports this, e.g. after a kill tore its log:
   * docs/storage.md "A browser killed mid-write"). Fired while the runtime starts; also in
   * `storageStatus().dataLoss`. The runtime goes on, on the new empty database.
   */
  onDataLoss?: (event: DataLossEvent) => void;
  /**
   * Sync the session with an agrun sync server (docs/storage.md "Sync"): `url` is its
   * endpoint (absolute in worker mode), `token` the session's from an earlier `rt.sync()`
   * (none for a session the server does not hold yet). The runtime syncs on `rt.sync()` and
   * whenever the page comes back online.
   */
  sync?: SyncOptions;
  /** How each sync made on coming back online went: its result, or the error it failed with. */
  onSync?: (result: SyncResult | null, error: AgrunError | null) => void;
  /** `{ enabled: false }`: global memory is neither read nor written; stored rows stay. */
  globalMemory?: { enabled?: boolean };
  /** The model: with one, run() is a model turn whose tools are the skills. */
  provider?: ProviderFunction | OpenAIProviderOptions | TestModelProvider | ReplayProviderOptions;
  /**
   * The whole-call deadline of a page-function `provider` (default 300000): past it the
   * call's `signal` is aborted and the turn fails with `provider_timeout`. An OpenAI
   * provider has its own `timeoutMs`.
   */
  providerTimeoutMs?: number;
  /**
   * A text embedding model, opt-in: recall then also finds older turns close in meaning to
   * the request, not only those sharing its words (docs/context.md). The page's own
   * function (wllama's `createEmbedding` on a MiniLM GGUF, say: one vector per text), or an
   * OpenAI-compatible `/embeddings` server. If it fails, the turn goes on without it.
   */
  embedder?: EmbedderFunction | OpenAIProviderOptions;
  /** The model's name, for providers that serve several. */
  model?: string;
  /** The system prompt at the head of every model call. */
  systemPrompt?: string;
  /** The model's window in its own tokens, prompt and reply (default 8192). */
  contextWindow?: number;
  /**
   * The longest reply asked for; reserved out of the window (default 512). A reply that runs
   * past 4 × this + 1024 tokens (or 16 bytes a token) ends the call with
   * `provider_reply_too_long`.
   */
  maxReplyTokens?: number;
  temperature?: number;
  /** Refused tool calls a run may have before it fails (default 2). */
  maxCorrections?: number;
  /** Tokens a run's model calls may spend before the model is asked to wrap up. */
  runTokenBudget?: number;
  /** Real tokens per estimated token until the provider's usage is seen (default 1.0). */
  tokenFactor?: number;
  /** The page's own wheels, installed with micropip before boot completes. */
  packages?: readonly WheelPackage[];
  /** Skills in those wheels (or in Pyodide's own packages). */
  pythonSkills?: readonly PythonSkillPath[];
  /** Load pyodide-http, so Python's urllib.request and requests work in the page. */
  pyodideHttp?: boolean;
  /**
   * On a first visit, restore the memory snapshot the build ships (agrun already imported)
   * instead of importing agrun: ready about twice as soon from a fast server, for 9.4 MiB
   * more to download (gzip'd; 28 MB as served uncompressed). Off by default: on a link
   * slower than about 40 Mbit/s the download costs more time than the import it saves
   * (docs/performance.md). Later visits restore a kept snapshot either way.
   */
  shippedSnapshot?: boolean;
  /** Mask secrets in every input and output before anything sees them (default true). */
  redactSecrets?: boolean;
  /**
   * Commit each turn after `run()` resolves with its answer, still under the session's lock
   * (the next operation and `idle()` wait for it), rather than before it (default true in a
   * page: the answer sooner; false in Python). A page closed in that moment loses the turn.
   */
  commitAfterAnswer?: boolean;
  /** How a turn's facts, preferences and decisions are extracted (default 'auto'). */
  memoryExtraction?: 'auto' | 'model' | 'rules' | 'off';
  /** Answer "remember: ...", "what do you remember" and "forget ..." (default true). */
  memoryCommands?: boolean;
  /** Keep each reply's body behind a content ref: true (default), false, or the limits. */
  contentStore?: boolean | ContentStoreLimits;
}

/** Hooks Python calls synchronously inside a turn: a runtime in a worker refuses them. */
export interface InPageHooks {
  /** The page's own token counter for context packs (default: agrun's estimator). */
  countTokens?: TokenCounter;
  sensitivityFilter?: SensitivityFilter;
  /** Ranks context inputs against the goal, query, topic and input (default: BM25). */
  ranker?: Ranker;
  /**
   * The page's compressors, by data type (default: key lines, head). Python's spelling
   * `tool_output` is refused: the page's is `toolOutput`.
   */
  compressors?: { toolOutput?: Compressor; artifact?: Compressor };
  /** Replaces the built-in secret masking of context inputs. */
  redactor?: Redactor;
}

/** Pyodide runs in this page (the default): every option. */
export interface PageRuntimeOptions extends RuntimeOptionsBase, InPageHooks {
  worker?: false;
}

/**
 * Pyodide runs in a module worker shared by the page's worker runtimes, so boot and turns
 * never block the page. Skills, the provider function, a page store and the callbacks stay in
 * the page; the synchronous hooks cannot (createRuntime throws code 'worker_unsupported').
 */
export interface WorkerRuntimeOptions extends RuntimeOptionsBase {
  worker: true;
  countTokens?: never;
  sensitivityFilter?: never;
  ranker?: never;
  compressors?: never;
  redactor?: never;
}

export type RuntimeOptions = PageRuntimeOptions | WorkerRuntimeOptions;

export interface RunOptions {
  /** Aborting it cancels the run: run() rejects with an 'AbortError' carrying `result`. */
  signal?: AbortSignal;
  /** Run this skill instead of selecting one (or asking the model). */
  skill?: string;
  /** Each piece of the model's reply text, as it streams. With redactSecrets on (the default)
   * masked as the kept reply is: a word once it has ended, further behind on a line that names
   * a credential. In worker mode the pieces the worker gives in one task come as one call.
   * Errors it throws are logged. */
  onToken?: (text: string) => void;
  /** Limits on what this run may spend (pydantic-ai's UsageLimits, camelCase); passing one
   * fails the run with 'usage_limit_exceeded'. Omitted: no limit. */
  usageLimits?: UsageLimits;
  /** A JSON Schema the answer must match: the model is asked for JSON (the provider's
   * `responseFormat`, and in words), the reply is checked, a misfit goes back to the model
   * within `maxCorrections`; `result.output` is then the checked data (docs/model.md). */
  outputSchema?: JsonObject;
}

/** Per-run usage limits; each omitted or null is no limit (docs/model.md, "Usage limits"). */
export interface UsageLimits {
  /** Model requests, answer and corrections alike (checked before each call). */
  requestLimit?: number | null;
  /** Tool calls that run (checked before a cycle's calls run). */
  toolCallsLimit?: number | null;
  /** Prompt tokens summed over the run's calls (checked after each call). */
  inputTokensLimit?: number | null;
  /** Reply tokens summed over the run's calls. */
  outputTokensLimit?: number | null;
  /** Prompt and reply tokens summed over the run's calls. */
  totalTokensLimit?: number | null;
}

// ---------------------------------------------------------------------------------------------
// Providers: the model a page supplies

/** An OpenAI-style chat message, as agrun sends it to a provider. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** null only on an assistant message that is tool calls alone. */
  content: string | null;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  /** `arguments` is JSON text. */
  function: { name: string; arguments: string };
}

/** An OpenAI-style tool definition: one per skill offered to the model. */
export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters: JsonObject };
}

/** What a provider function is asked: the OpenAI chat body, options in camelCase. */
export interface ProviderRequest {
  messages: ChatMessage[];
  /** Empty when no tool is offered (the model is asked to wrap up). */
  tools: ChatTool[];
  model?: string;
  maxTokens?: number;
  temperature?: number;
  stop?: string[];
  toolChoice?: 'auto' | 'none' | 'required';
  /** e.g. `{ type: 'json_schema', json_schema: { name, schema } }` for constrained JSON. */
  responseFormat?: JsonObject;
}

export interface ProviderCallOptions {
  /** Aborted when the run is cancelled: stop generating and reject. */
  signal: AbortSignal;
  /** Stream each piece of the reply's text (never tool-call markup) through this. */
  onToken: (delta: string) => void;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'other';

export interface ProviderToolCall {
  id?: string | null;
  name: string;
  /** JSON text, or the arguments as an object. */
  arguments?: string | JsonObject;
}

/** A provider's answer. The text not streamed through onToken is taken from `text`. */
export interface ProviderReply {
  text?: string;
  toolCalls?: ProviderToolCall[];
  usage?: { promptTokens?: number; completionTokens?: number } | null;
  finishReason?: FinishReason | null;
}

export type ProviderFunction = (
  request: ProviderRequest,
  options: ProviderCallOptions,
) => ProviderReply | Promise<ProviderReply>;

// ---------------------------------------------------------------------------------------------
// Runs: results, state, events (agrun.kernel)

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'cancelled';
export type Phase = 'observe' | 'orient' | 'decide' | 'act' | 'evaluate';

/** Why a run did not succeed, as a stable code (agrun.kernel.ErrorCode). */
export type RunErrorCode =
  | 'skill_error'
  | 'skill_timeout'
  | 'output_not_serializable'
  | 'matcher_error'
  | 'cycle_limit'
  | 'cancelled'
  | 'provider_error'
  | 'provider_http_error'
  | 'provider_rate_limited'
  | 'provider_unavailable'
  | 'provider_timeout'
  | 'provider_stream_cut'
  | 'provider_reply_too_long'
  | 'provider_protocol_error'
  | 'context_building_failed'
  | 'unknown_tool'
  | 'invalid_tool_arguments'
  | 'usage_limit_exceeded'
  | 'output_validation_failed';

export interface RunError {
  code: RunErrorCode;
  /** For a person, naming the bad value. */
  message: string;
  skill: string | null;
  phase: Phase | null;
  /** 1-based; 0 before the first cycle. */
  cycle: number;
}

export interface Observation {
  cycle: number;
  skill: string | null;
  outcome: 'succeeded' | 'failed' | 'cancelled';
  summary: string;
  outputKind: 'none' | 'text' | 'number' | 'boolean' | 'list' | 'object' | null;
  errorCode: RunErrorCode | null;
}

export interface CycleRecord {
  cycle: number;
  observe: { inputChars: number; memoryCount: number; previous: Observation | null } | null;
  orient: {
    requestedSkill: string | null;
    candidates: string[];
    /** Model turns only. */
    packId?: string;
    budgetUsed?: number;
    budgetLimit?: number;
  } | null;
  decide: { skill: string; reason: string } | null;
  act: {
    skill: string;
    outcome: 'returned' | 'raised' | 'timed_out' | 'cancelled';
    memoryRequests: number;
    cycleRequest: string | null;
    /** Model turns only: `name:outcome` per tool call. */
    toolCalls?: string[];
  } | null;
  evaluate: { outcome: 'succeeded' | 'failed' | 'cancelled'; next: 'finish' | 'continue' | 'fail' | 'cancel' } | null;
}

export type StepAction =
  | 'build_context'
  | 'call_model'
  | 'call_tool'
  | 'correct_tool_call'
  | 'correct_output'
  | 'wrap_up'
  | 'limit'
  | 'observe'
  | 'orient'
  | 'select_skill'
  | 'run_skill'
  | 'evaluate'
  | 'request_cycle'
  | 'append_memory'
  | 'drop_memory_request'
  | 'finish'
  | 'fail'
  | 'cancel';

export interface Step {
  /** 1-based. */
  index: number;
  cycle: number;
  phase: Phase | null;
  action: StepAction;
  detail: string;
  skill: string | null;
}

export interface RunState {
  runId: string;
  status: RunStatus;
  stepCount: number;
  cycleCount: number;
  phase: Phase | null;
  selectedSkill: string | null;
  observation: Observation | null;
  error: RunError | null;
  oodae: { cycles: CycleRecord[] };
  /** The session memory and inquiry context the run started from. */
  contextSnapshot: { sessionMemory: SessionMemory | null; inquiryContext: InquiryContext | null };
  /**
   * Set when the run tried to read session evidence, a source or stored content (kind
   * 'content': a skill's `context.content(ref)` or the model's `read_content`; target is the
   * ref, `found` false for a miss). The last read of the run wins.
   */
  readAttemptSignal: {
    kind: 'evidence' | 'source' | 'content';
    target: string;
    found: boolean;
    sources: string[];
  } | null;
  /**
   * @deprecated A flattened, frozen copy of `contextSnapshot` (not enumerable; on run()
   * results only), for debug code that still reads it: read `contextSnapshot`.
   */
  readonly sessionContextView?: Readonly<Partial<SessionMemory & InquiryContext>>;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

/** A small summary of the most recent run (agrun.kernel.LastRun). */
export interface LastRun {
  runId: string;
  status: RunStatus;
  selectedSkill: string | null;
  cycleCount: number;
  stepCount: number;
  observation: Observation | null;
  error: RunError | null;
  startedAt: number;
  finishedAt: number;
  /** Every model call's tokens, summed: the answer's and the memory extraction's. */
  usage?: Usage | null;
  /** Every model call the turn made. The extraction runs after run() resolves: it is
   * counted once it is done (`await rt.idle()`). */
  modelCalls?: number | null;
  /** `modelCalls` by what each call was for. */
  callsByPurpose?: { answer?: number; extraction?: number } | null;
}

/** A run's result as plain data (what JSON, storage and the wire carry). */
export interface RunResultData {
  /** What the skill (or the model's reply) came to; null unless the run succeeded. */
  output: JsonValue;
  state: RunState;
  /** Everything the runtime did, in order. */
  steps: Step[];
  error: RunError | null;
  /** Every event the run emitted, in order (context builds' events go to onEvent only). */
  events: RuntimeEvent[];
  /** What the turn added to the history: the person's message and the reply; for a failed or
   * cancelled run, the person's message, marked with `runStatus` and `errorCode` (and for a
   * cancelled model turn that had streamed text, that text as one assistant message, marked
   * the same). */
  messages: Message[];
}

/** What run() resolves to: the result's data and one method. */
export interface RunResult extends RunResultData {
  /** This result if the run succeeded; else throws a RunFailedError carrying it (not
   * enumerable: the result stays plain JSON). */
  throwIfFailed(): RunResult;
}

export interface EventBase {
  /** The run it belongs to ('' for SessionDamaged). */
  runId: string;
  /** Position in the runtime's event stream, from 1. */
  seq: number;
  /** Clock milliseconds. */
  at: number;
}

export interface RunStartedEvent extends EventBase {
  kind: 'RunStarted';
  /** Up to 2000 characters. */
  input: string;
  inputChars: number;
  requestedSkill: string | null;
}
export interface PhaseEnteredEvent extends EventBase {
  kind: 'PhaseEntered';
  phase: Phase;
  cycle: number;
}
export interface SkillSelectedEvent extends EventBase {
  kind: 'SkillSelected';
  skill: string;
  reason: string;
  cycle: number;
}
export interface CycleRequestedEvent extends EventBase {
  kind: 'CycleRequested';
  reason: string;
  cycle: number;
}
export interface ObservationDerivedEvent extends EventBase {
  kind: 'ObservationDerived';
  observation: Observation;
}
export interface MemoryAppendedEvent extends EventBase {
  kind: 'MemoryAppended';
  entry: MemoryEntry;
}
export interface MemoryRequestDroppedEvent extends EventBase {
  kind: 'MemoryRequestDropped';
  request: CheckedMemoryRequest;
  reason: string;
}
export interface RunFinishedEvent extends EventBase {
  kind: 'RunFinished';
  summary: LastRun;
}
export interface RunFailedEvent extends EventBase {
  kind: 'RunFailed';
  error: RunError;
  summary: LastRun;
}
export interface RunCancelledEvent extends EventBase {
  kind: 'RunCancelled';
  error: RunError;
  summary: LastRun;
}
export interface SessionDamagedEvent extends EventBase {
  kind: 'SessionDamaged';
  sessionId: string;
  problems: string[];
  count: number;
}
export interface SessionMemoryRebuiltEvent extends EventBase {
  kind: 'SessionMemoryRebuilt';
  revision: number;
  source: 'model' | 'rules' | 'remember';
  facts: number;
  preferences: number;
  decisions: number;
}
export interface SessionMemoryKeptEvent extends EventBase {
  kind: 'SessionMemoryKept';
  reason: string;
}
export interface GlobalMemoryPromotedEvent extends EventBase {
  kind: 'GlobalMemoryPromoted';
  ids: string[];
  refused: string[];
}
export interface ContentRetrievedEvent extends EventBase {
  kind: 'ContentRetrieved';
  ref: string;
  found: boolean;
  counters: Record<string, number>;
}
export interface ModelCallStartedEvent extends EventBase {
  kind: 'ModelCallStarted';
  cycle: number;
  model: string | null;
  /** The digest of the context pack the request was rendered from. */
  packId: string;
  messages: number;
  tools: string[];
  contentStore: Record<string, number> | null;
}
export interface ModelCallFinishedEvent extends EventBase {
  kind: 'ModelCallFinished';
  cycle: number;
  model: string | null;
  packId: string;
  finishReason: FinishReason;
  usage: Usage | null;
  textChars: number;
  toolCalls: string[];
}
export interface ModelCallFailedEvent extends EventBase {
  kind: 'ModelCallFailed';
  cycle: number;
  model: string | null;
  packId: string;
  code: string;
  message: string;
  partialText: string;
}
export interface ToolCallFinishedEvent extends EventBase {
  kind: 'ToolCallFinished';
  cycle: number;
  callId: string;
  tool: string;
  outcome: 'returned' | 'raised' | 'timed_out' | 'cancelled' | 'refused';
  detail: string;
  /** The result's size in UTF-8 bytes when it was over the bound and cut; null: kept whole. */
  cutFromBytes: number | null;
}

/** The runtime's events (agrun.kernel.RuntimeEvent), tagged by `kind`. */
export type RuntimeEvent =
  | RunStartedEvent
  | PhaseEnteredEvent
  | SkillSelectedEvent
  | CycleRequestedEvent
  | ObservationDerivedEvent
  | MemoryAppendedEvent
  | MemoryRequestDroppedEvent
  | RunFinishedEvent
  | RunFailedEvent
  | RunCancelledEvent
  | SessionDamagedEvent
  | SessionMemoryRebuiltEvent
  | SessionMemoryKeptEvent
  | GlobalMemoryPromotedEvent
  | ContentRetrievedEvent
  | ModelCallStartedEvent
  | ModelCallFinishedEvent
  | ModelCallFailedEvent
  | ToolCallFinishedEvent;

export interface ContextEventBase {
  /** The event that caused the build (a run's id, for the runtime's own builds). */
  causationId: string | null;
  stage: string | null;
}
export interface ContextBuildingStartedEvent extends ContextEventBase {
  kind: 'ContextBuildingStarted';
  budgetLimit: number;
  cursor: number;
  messages: number;
}
export interface CompressionAppliedEvent extends ContextEventBase {
  kind: 'CompressionApplied';
  records: CompressionRecord[];
}
export interface LayerTruncatedEvent extends ContextEventBase {
  kind: 'LayerTruncated';
  layer: string;
  reason: string;
  sources: string[];
  count: number;
  movedTo: string | null;
}
export interface ContextPackBuiltEvent extends ContextEventBase {
  kind: 'ContextPackBuilt';
  budgetUsed: number;
  budgetLimit: number;
  metrics: ContextMetrics;
  durationMs: number | null;
  /** sha256 of the pack's canonical JSON. */
  packDigest: string;
}
export interface ContextBuildingFailedEvent extends ContextEventBase {
  kind: 'ContextBuildingFailed';
  /** 'cancelled' for a cancelled build. */
  reason: string;
  needed: number | null;
  available: number | null;
  items: string[];
}

/** A context build's events (agrun.context.ContextEvent), tagged by `kind`. */
export type ContextEvent =
  | ContextBuildingStartedEvent
  | CompressionAppliedEvent
  | LayerTruncatedEvent
  | ContextPackBuiltEvent
  | ContextBuildingFailedEvent;

/** What onEvent and rt.stream() hear. */
export type AgrunEvent = RuntimeEvent | ContextEvent;

/** What rt.stream() yields: tokens and events as they happen, the result last. */
export type StreamItem =
  | { type: 'token'; text: string }
  | { type: 'event'; event: AgrunEvent }
  | { type: 'result'; result: RunResult };

// ---------------------------------------------------------------------------------------------
// History, memory, content, continuity

export type Role = 'user' | 'assistant' | 'system' | 'tool';
/** For role 'user': a person, or which of the library's own frames the message is. */
export type MessageAuthor =
  | 'person'
  | 'drop_notice'
  | 'compaction_frame'
  | 'schema_correction'
  | 'evidence_correction'
  | 'budget_wrap_up'
  | 'nudge'
  | 'injected';

export interface ToolCall {
  id: string;
  name: string;
  /** As the provider sent them: JSON text or an object. */
  arguments: JsonValue;
}

/** One message of the session's history (agrun.context.Message). */
export interface Message {
  id: string;
  role: Role;
  content: string;
  author: MessageAuthor;
  /** Set with author 'injected' only. */
  injectedBy: string | null;
  toolCalls: ToolCall[];
  toolCallId: string | null;
  name: string | null;
  /** A reply whose whole body is in the content store: its ref (see rt.content()). */
  contentRef?: string;
  contentKind?: string;
  contentBytes?: number;
  /** `sha256:<hex>` of the body. */
  contentDigest?: string;
  /** When it was said (epoch ms, UTC): the start of its turn. Recall reads its day. */
  atMs?: number;
  /** A person's message whose turn failed or was cancelled: how it ended; later turns'
   * windows see it, noted as not answered. On an assistant message, `cancelled`: an answer
   * the person stopped, kept as far as it had streamed (noted as cut short, never recalled). */
  runStatus?: 'failed' | 'cancelled';
  /** With `runStatus`: the run's error code. */
  errorCode?: string;
}

/** What a skill asks to remember; the runtime fills in the rest. */
export interface MemoryEntryRequest {
  text: string;
  /** Letters, digits and `_ . : -`, up to 64 (default 'note'). */
  kind?: string;
  data?: JsonObject;
}

/** A memory request as the runtime checked it. */
export interface CheckedMemoryRequest {
  kind: string;
  text: string;
  data: JsonObject;
}

/** A memory entry as the runtime stores it (agrun.kernel.MemoryEntry). */
export interface MemoryEntry {
  id: string;
  /** 1-based position in the session's memory log. */
  seq: number;
  runId: string;
  kind: string;
  text: string;
  data: JsonObject;
  createdAt: number;
  /** The runtime's observation policy or a skill's explicit request. */
  source: 'observation' | 'skill';
  skill: string | null;
}

/** A stored body behind a content ref (agrun.kernel.ContentEntry). */
export interface ContentEntry {
  ref: string;
  /** What the body is; `null` for a run whose output was None / null. */
  kind: 'text' | 'object' | 'list' | 'number' | 'boolean' | 'null' | 'fallback';
  /** Deeply read-only wherever it is handed out: a write throws a TypeError. */
  body: JsonValue;
  /** UTF-8 bytes of its JSON. */
  bytes: number;
  /** `sha256:<hex>`. */
  digest: string;
  runId: string;
  depth: number;
  serialization: 'json' | 'fallback';
  errorClass: string | null;
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number | null;
}

export interface Evidence {
  text: string;
  /** The message it was learned from. */
  source: string;
  runId: string;
}

/** Facts, preferences, decisions, summary and recent turns (agrun.kernel.SessionMemory). */
export interface SessionMemory {
  facts: Evidence[];
  preferences: Evidence[];
  decisions: Evidence[];
  summary: string;
  recentTurns: string[];
  revision: number;
}

export interface SourceRef {
  id: string;
  title: string;
}

/** Goal, topic, query, sources and clarification state (agrun.kernel.InquiryContext). */
export interface InquiryContext {
  activeGoal: string | null;
  activeTopic: string | null;
  activeQuery: string | null;
  candidateSources: SourceRef[];
  selectedSource: SourceRef | null;
  lastSearch: string | null;
  lastReadSource: SourceRef | null;
  pendingClarification: { question: string; missing: string; options: string[]; askedIn: string } | null;
  lastClarificationResolution: { question: string; answer: string; resolvedIn: string } | null;
}

/** One row of global memory (agrun.kernel.GlobalEntry). */
export interface GlobalMemoryEntry {
  id: string;
  kind: 'fact' | 'preference' | 'note' | 'forget';
  text: string;
  /** 0 to 1. */
  confidence: number;
  /** Where it was learned; null when the page promoted it. */
  sessionId: string | null;
  createdAt: number;
  /** For a tombstone: the id of the entry it forgets. */
  forgets: string | null;
  data: JsonObject;
}

/** An entry to promote: its text, or the text with a kind, a confidence and data of its own. */
export type GlobalMemoryPromotion =
  | string
  | { text: string; kind?: 'fact' | 'preference' | 'note'; confidence?: number; [data: string]: JsonValue | undefined };

export interface Promotion {
  promoted: GlobalMemoryEntry[];
  /** Why each refused entry was refused. */
  refused: string[];
}

export interface SyncOptions {
  /** The sync server's endpoint: `POST <url>/pull` and `POST <url>/push`. */
  url: string;
  /** The session's token (issued by the server on the session's first push). */
  token?: string | null;
}

export interface SyncResult {
  /** Turn ids the server stored for the first time. */
  pushed: string[];
  /** Turn ids this runtime took from the server. */
  pulled: string[];
  /** The session's token: keep it, every later sync of the session must show it. */
  token: string | null;
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
  /** 'indexeddb', 'memory', 'custom' (the page's own store), 'none'... */
  backend: string;
  reason?: string | null;
  method?: string | null;
  /** Turns of this page only the in-memory fallback holds (merged back if IndexedDB returns). */
  unsynced?: number;
  /** Every write only the fallback holds (turns, imports, global memory), replayed in order. */
  unsyncedWrites?: number;
  /**
   * The browser found the site's IndexedDB damaged when it opened it and deleted it (Chromium
   * reports this; docs/storage.md "A browser killed mid-write"): the sessions stored before
   * are gone. Null when it reported nothing.
   */
  dataLoss?: DataLossEvent | null;
}

// ---------------------------------------------------------------------------------------------
// Context packs (agrun.context; docs/context.md)

export type LayerName = 'L0' | 'L1' | 'L2' | 'L3' | 'L4';

export interface MessageInput {
  id: string;
  role: Role;
  content?: string;
  author?: MessageAuthor;
  /** Required with author 'injected', refused with any other. */
  injectedBy?: string | null;
  toolCalls?: Array<{ id: string; name: string; arguments?: JsonValue }>;
  toolCallId?: string | null;
  name?: string | null;
}

/** Everything optional; docs/context.md gives the defaults. */
export interface ContextRequest {
  messages?: MessageInput[];
  /** Messages before it are already in memory. */
  cursor?: number;
  input?: string | null;
  stage?: string | null;
  model?: string | null;
  systemPrompt?: string | null;
  direction?: {
    activeGoal?: JsonValue;
    activeTopic?: JsonValue;
    activeQuery?: JsonValue;
    pendingClarification?: JsonValue;
    lastClarificationResolution?: JsonValue;
    selectedSource?: JsonValue;
    lastReadSource?: JsonValue;
  };
  memory?: Array<{
    id: string;
    text: string;
    layer?: 'L2' | 'L3' | 'L4';
    kind?: 'fact' | 'preference' | 'decision' | 'summary' | 'note' | 'debug';
    seq?: number;
  }>;
  artifacts?: Array<{ id: string; name: string; version?: number; valid?: boolean; content?: string }>;
  toolOutputs?: Array<{ id: string; tool: string; content?: string; isError?: boolean; seq?: number }>;
  events?: Array<{ id: string; kind: string; text: string; atMs?: number }>;
  approvals?: Array<{ id: string; action: string; decision: string; by?: string | null }>;
  steering?: Array<{ id: string; text: string }>;
  policies?: Array<{ id: string; text: string; stages?: string[] | null; active?: boolean }>;
  budget?: {
    limit?: number;
    perModel?: Record<string, number>;
    perStage?: Record<string, number>;
    reserve?: number;
    sessionL2Cap?: number | null;
  };
  options?: {
    keepRecentTurns?: number;
    maxToolOutputTokens?: number;
    maxArtifactTokens?: number;
    transcriptShare?: number;
    summaryScan?: number;
    summaryMaxTokens?: number;
    eventHalfLifeMs?: number;
    layers?: LayerName[];
    /** Share of what is left for older transcript that recall may take (default 0.6; 0: off). */
    recallShare?: number;
    /** How many of the newest messages recall searches (default 10000). */
    recallScan?: number;
    /** Cut a recalled turn longer than 120 tokens to its most relevant sentence and the ones
     * either side (default true); false recalls whole turns. A recalled turn starts with its
     * date when known: `[2024-03-14] ...`. */
    recallPassages?: boolean;
    /** Default: every signal but 'entities'. */
    recallSignals?: Array<'speaker' | 'entities' | 'dates' | 'question' | 'exchange' | 'similarity'>;
  };
  nowMs?: number | null;
  /** Cosine similarity of older messages to the request, by id (an embedder's; -1 to 1). */
  recallSimilarity?: Record<string, number>;
  causationId?: string | null;
}

export interface ContextEntry {
  id: string;
  layer: string;
  kind:
    | 'system'
    | 'policy'
    | 'direction'
    | 'steering'
    | 'message'
    | 'tool_output'
    | 'event'
    | 'artifact'
    | 'approval'
    | 'memory'
    | 'summary'
    | 'merged_memory'
    | 'extension';
  content: string;
  /** The inputs it was made from: message, memory, event, artifact ids. */
  sources: string[];
  tokens: number;
  role: Role | null;
  name: string | null;
  toolCalls: ToolCall[];
  toolCallId: string | null;
  compressed: boolean;
  score: number | null;
}

export interface CompressionRecord {
  source: string;
  dataType: string;
  strategy: string;
  spans: Array<[number, number]>;
  tokensBefore: number;
  tokensAfter: number;
}

export interface DroppedItem {
  kind: string;
  reason:
    | 'over_budget'
    | 'duplicate'
    | 'superseded'
    | 'invalid_artifact'
    | 'orphan_tool_result'
    | 'orphan_reply'
    | 'layer_not_requested'
    | 'moved_to_l3'
    | 'before_cursor';
  first: string;
  last: string;
  count: number;
}

/** One older turn the recall stage scored: recalled, or passed over. */
export interface RecallHit {
  /** The message's id. */
  id: string;
  /** Its relevance to the request (BM25 and the signals, rounded to 4 places). */
  score: number;
  /** Whether the pack holds a passage cut from it rather than the whole turn. */
  passage: boolean;
  /** For a turn brought along by another: the same speaker's next or previous turn, or the reply to a recalled question; `recent` for a turn just below the window that matched nothing and fills room no match could; null for a turn recalled on its own score. */
  via: 'after' | 'before' | 'answer' | 'recent' | null;
}

/** What the recall stage searched, found and kept (docs/context.md). */
export interface RecallMetrics {
  /** Older messages it could recall from (outside the window, recallable). */
  searched: number;
  /** Of those, how many scored above zero. */
  matched: number;
  /** How many are in the pack as `recalled_turn` entries. */
  recalled: number;
  /** The recalled turns, in conversation order. */
  turns: RecallHit[];
  /** The best-scoring turns left out for the budget (at most 8), best first. */
  passedOver: RecallHit[];
}

export interface ContextMetrics {
  tokensPerLayer: Record<string, number>;
  compressionRatio: number;
  l2Tokens: number;
  dedupHitRate: number;
  recall: RecallMetrics;
}

export interface ContextPack {
  /** L0..L4 always, extension layers after them under their own names. */
  layers: Record<LayerName, ContextEntry[]> & { [extension: string]: ContextEntry[] };
  budgetUsed: number;
  budgetLimit: number;
  compressionMetadata: {
    tokenizer: string;
    /** The current request's message id, or null when the log holds none. */
    anchor: string | null;
    reserved: number;
    records: CompressionRecord[];
    /** What was left out, and why. */
    dropped: DroppedItem[];
    movedToL3: string[];
    dedupChecked: number;
    dedupHits: number;
  };
  metrics: ContextMetrics;
  nextCursor: number;
}

// ---------------------------------------------------------------------------------------------
// Why an answer was given, replay, what-if (issue 22; agrun.kernel.RunTrace, WhatIf)

/** One entry of a traced pack, without its text. */
export interface TraceEntry {
  id: string;
  layer: string;
  kind: string;
  sources: string[];
  tokens: number;
  compressed: boolean;
}

/** What a replay checks a request against. */
export interface RequestShape {
  /** sha256 of the request's canonical JSON, its packId left out. */
  digest: string;
  model: string | null;
  maxTokens: number | null;
  temperature: number | null;
  tools: string[];
  /** Each rendered message's role and the first 16 hex digits of its digest. */
  messages: Array<[string, string]>;
}

/** One model call of a run. */
export interface CallTrace {
  cycle: number;
  packId: string;
  packDigest: string;
  budgetUsed: number;
  budgetLimit: number;
  tokensPerLayer: Record<string, number>;
  entries: TraceEntry[];
  dropped: Array<{ kind: string; reason: string; first: string; last: string; count: number }>;
  movedToL3: string[];
  /** The calibration factor the budget was divided by (real tokens per estimated one). */
  factor: number;
  /** The pack's tokens by agrun's tokenizer. */
  estimated: number;
  usage: Usage | null;
  request: RequestShape;
  /** What the provider answered (texts scrubbed); null when the call failed. */
  reply: {
    text: string;
    toolCalls: Array<[string, string, string]>;
    finishReason: string;
    usage: Usage | null;
  } | null;
  failed: string | null;
  /** The context request minus the history: what whatIf rebuilds from. */
  recipe: JsonObject | null;
}

/** One entry of the answering pack: used by the answer or not, and where. */
export interface AttributedEntry {
  id: string;
  layer: string;
  used: boolean;
  /** The best share of a sentence's content words the entry holds (0..1). */
  score: number;
  /** With an embedder: its best cosine similarity with a sentence of the answer. */
  similarity?: number;
  /** Which signals marked it used ('similarity': the embedder's, at `similarityThreshold`). */
  via: Array<'overlap' | 'ngram' | 'citation' | 'similarity'>;
  /** [start, end) character ranges of the answer it backs. */
  spans: Array<[number, number]>;
}

/** Why a run answered as it did: `rt.why(runId)`. */
export interface RunTrace {
  runId: string;
  model: string | null;
  status: string;
  calls: CallTrace[];
  attribution: {
    /** Index in `calls` of the call that answered. */
    call: number;
    threshold: number;
    /** The cosine the embedder's similarity marks at; absent without an embedder. */
    similarityThreshold?: number;
    sentences: Array<[number, number]>;
    entries: AttributedEntry[];
  } | null;
  /** The memory extraction's model calls after the answer (memoryExtraction 'model'). */
  extractions: Array<{
    request: RequestShape;
    reply: CallTrace['reply'];
    failed: string | null;
  }>;
}

/** An entry of the recorded pack (or of the rebuilt one) and what became of it. */
export interface EntryChange {
  id: string;
  layer: string;
  tokensBefore: number | null;
  tokensAfter: number | null;
  compressedBefore: boolean;
  compressedAfter: boolean;
  /** For an entry the rebuild left out: why ('over_budget', 'moved_to_l3', ...). */
  reason: string | null;
}

/** What `rt.whatIf` changes (the names of Python's `what_if`). */
export interface WhatIfOptions {
  /** Another token limit for the pack. */
  budget?: number;
  /** Another context window (the limit follows as a run sets it). */
  window?: number;
  /** Which of the run's calls (default the last, the one that answered). */
  call?: number;
  /** Count tokens with this instead of the runtime's counter. */
  tokenizer?: TokenCounter;
  /** Rank with this instead of the runtime's ranker. */
  ranker?: Ranker;
}

/** `rt.whatIf(runId, { budget?, window?, call?, tokenizer?, ranker? })`: a recorded pack rebuilt, no model called. */
export interface WhatIf {
  runId: string;
  call: number;
  setting: JsonObject;
  /** Whether the recorded setting rebuilds the recorded pack. */
  faithful: boolean;
  budgetBefore: [number, number];
  budgetAfter: [number, number];
  kept: EntryChange[];
  compressed: EntryChange[];
  dropped: EntryChange[];
  added: EntryChange[];
  mergedIntoL3: string[];
  tokensPerLayer: Record<string, [number, number]>;
}

/** `replayProvider(exportText)`: answers with a recorded session's replies. */
export interface ReplayProviderOptions {
  readonly kind: 'replay';
  readonly export: string;
}

/**
 * A provider that answers each model call with the reply recorded in a session export, in
 * order, checking each request; the first that differs rejects the run with AgrunError code
 * 'replay_diverged' naming the call and how.
 */
export declare function replayProvider(exportText: string): ReplayProviderOptions;

// ---------------------------------------------------------------------------------------------
// The runtime

/**
 * A booted runtime: create it with `createRuntime`. Calls are served one after the other;
 * each turn holds its session's lock across tabs. The read methods answer at once.
 */
export interface Runtime {
  /** Resume the session from storage again (createRuntime already did). */
  open(): Promise<void>;
  /**
   * A failed run resolves (status 'failed', with `error`); an aborted one rejects with an
   * AgrunError named 'AbortError', code 'cancelled', carrying the `result`. Rejects with
   * AgrunConfigError for input that is not a string or holds a lone surrogate (code
   * 'invalid_input'), a skill name no skill has ('unknown_skill'), or a call made while this
   * runtime (or another on the same session lock) is inside one of the page's functions: a
   * skill, the provider, the embedder, a hook ('reentrant_call', also for the other async methods);
   * with AgrunError code 'interpreter_failed' if the interpreter dies mid-run, or in worker
   * mode its worker does (terminated, closed, or silent while a call waits): the turn is not
   * committed, and this runtime refuses further calls with that code.
   */
  run(input: string, options?: RunOptions): Promise<RunResult>;
  /**
   * The run's tokens and events as they happen, then its result. Leaving the loop early
   * aborts the run; a failure to run rejects the iteration as run() would.
   */
  stream(input: string, options?: RunOptions): AsyncGenerator<StreamItem, void, undefined>;
  /**
   * Throws AgrunConfigError ('invalid_context_request'; 'worker_unsupported' in a runtime in
   * a worker, which cannot answer synchronously) or AgrunError ('context_building_failed').
   */
  buildContext(request: ContextRequest): ContextPack;
  /**
   * Resolves once what the last turn goes on with after run() resolves is done: its commit
   * (`commitAfterAnswer`, on by default), its trace, and with a model extraction
   * (`memoryExtraction` 'auto' or 'model' with a provider) its memory close. Await it before
   * reading the store yourself, sessionMemory() or state().lastRun; later operations wait by
   * themselves.
   */
  idle(): Promise<void>;
  /** The session as an export file (JSON text). */
  exportSession(): Promise<string>;
  /**
   * Store an export file as this session and resume from it; a bad file ('import_rejected')
   * changes nothing. Without `replace` while storage is degraded to memory: 'storage_degraded'.
   */
  importSession(jsonText: string, options?: { replace?: boolean }): Promise<void>;
  /**
   * Sync with the `sync` option's server: push the turns it lacks, then hold its session
   * (merged in the order the server received turns). Rejects 'sync_forbidden' (the token does
   * not own the session) or 'sync_failed' (offline, server failed), changing nothing here.
   */
  sync(): Promise<SyncResult>;
  /**
   * The store's conversations, ordered by id (this runtime's once it has a turn or a title).
   * Rejects with 'config_error' for a runtime without storage.
   */
  listSessions(): Promise<SessionInfo[]>;
  /**
   * Store a title with a session (null removes it); this runtime's session can be named before
   * its first turn. Rejects with 'session_not_found' for a session neither stored nor this
   * runtime's, 'config_error' for a blank title or one over 200 characters.
   */
  renameSession(sessionId: string, title: string | null): Promise<void>;
  /**
   * Empty a session, keeping its id and title: history, memory, session memory, inquiry,
   * content, traces and lastRun go (from this runtime too when it is its own). Global memory
   * promoted from it stays. Rejects with 'session_not_found' for an unknown id.
   */
  clearSession(sessionId: string): Promise<void>;
  /**
   * Remove a session entirely, title included; global memory promoted from it stays. This
   * runtime's own session: the runtime is emptied and keeps its id (a next turn stores it
   * again). Rejects with 'session_not_found' for an unknown id.
   */
  deleteSession(sessionId: string): Promise<void>;
  /** The session's messages, oldest first. */
  history(): Message[];
  storageStatus(): StorageStatus;
  /** `{ lastRun }`: a small summary of the most recent run. */
  state(): { lastRun: LastRun | null };
  memory(): MemoryEntry[];
  /**
   * Read-only (a write throws a TypeError). Throws AgrunError code 'content_ref_not_found' for
   * a ref evicted, expired, never stored, or whose stored body no longer matches its digest.
   */
  content(ref: string): DeepReadonly<ContentEntry>;
  /** The pack the last model call was sent (what a "why" panel shows); null before any. */
  lastPack(): ContextPack | null;
  /**
   * Why a run answered as it did, for any model turn of the session whose trace is held
   * (bounded per session, oldest evicted first), also after a reload and in a worker.
   * Rejects with AgrunError code 'trace_not_found' otherwise.
   */
  why(runId: string): Promise<RunTrace>;
  /**
   * A recorded call's pack rebuilt under another budget or window, no model called; rejects
   * with 'trace_not_found', or AgrunConfigError for a bad setting.
   */
  /**
   * A recorded call's pack rebuilt under another budget, window, token counter or ranker; no
   * model is called. `tokenizer` and `ranker` are the page's functions (a runtime in a worker
   * rejects them with code 'worker_unsupported').
   */
  whatIf(runId: string, options?: WhatIfOptions): Promise<WhatIf>;
  sessionMemory(): SessionMemory | null;
  inquiry(): InquiryContext | null;
  /** Global memory's live entries; empty when it is disabled. */
  globalMemory(): GlobalMemoryEntry[];
  /**
   * Through the sensitive-content filter and the page's sensitivityFilter: what a filter
   * refused is never written. Rejects with code 'config_error' when global memory is disabled.
   */
  promoteToGlobalMemory(entries: readonly GlobalMemoryPromotion[]): Promise<Promotion>;
  /** Stores a tombstone; resolves to whether a live entry had that id. */
  forgetGlobalMemory(id: string): Promise<boolean>;
  /** For tests: helper proxies alive (0 between runs); `worker: true` for a runtime in a worker. */
  /**
   * Counts a test can check, and how the interpreter started: `'snapshot'` (restored from the
   * memory snapshot an earlier visit kept), `'shipped-snapshot'` (restored from the one the
   * build ships: a first visit), `'saved-snapshot'` (booted afresh and saved one) or `'fresh'`
   * (docs/performance.md). `bootMarks`: each boot step's mark in the thread Python runs in (the
   * worker's in worker mode), `[name, epoch ms]` (`performance.timeOrigin + startTime`).
   */
  diagnostics(): {
    liveProxies: number;
    worker?: true;
    boot: 'snapshot' | 'shipped-snapshot' | 'saved-snapshot' | 'fresh';
    bootMarks: [string, number][];
  };
  /**
   * Further calls throw code 'closed' at once; the Python side is released once the last
   * turn is kept (with `commitAfterAnswer` its commit follows its answer): await it before
   * opening the session's store yourself.
   */
  close(): Promise<void>;
}

/**
 * Boot agrun (once per page and indexURL) and create a runtime. Rejects with AgrunBootError
 * (code 'boot_failed') naming the file when a vendored file cannot be loaded or
 * pyodide.asm.wasm cannot be compiled (truncated, garbled, or damaged in the offline cache
 * and not fetchable again), or when the worker of a worker-mode runtime cannot start; with
 * AgrunError code 'interpreter_failed' when that worker dies after it started.
 */
export declare function createRuntime(options?: RuntimeOptions): Promise<Runtime>;
/**
 * Resolves once every runtime of this page has kept the turns it answered: what runs after
 * `run()` resolves (the turn's commit with `commitAfterAnswer`, its trace, a model
 * extraction) is done. Await it before a script navigates away or reloads the page.
 */
export declare function settled(): Promise<void>;

// ---------------------------------------------------------------------------------------------
// The chat controller (web/widget/chat.js): a conversation as data a view draws

/** A run's or AgrunError's code sorted into what a person can act on (docs/widget.md). */
export type ChatErrorKind =
  | 'unavailable'
  | 'timeout'
  | 'rate_limited'
  | 'cut'
  | 'model_failed'
  | 'bad_reply'
  | 'too_long'
  | 'too_big'
  | 'auth'
  | 'not_found'
  | 'refused'
  | 'tool_failed'
  | 'skill_failed'
  | 'gave_up'
  | 'stopped_working'
  | 'storage'
  | 'other';

export interface ChatError {
  kind: ChatErrorKind;
  /** The runtime's code (a RunErrorCode or an AgrunErrorCode). */
  code: string;
  /** The runtime's own message: the details. */
  message: string;
  /** false where sending the same again cannot help (a 4xx, a reply the server could not parse). */
  retryable: boolean;
}

export interface ChatTextPart {
  type: 'text';
  text: string;
}

export interface ChatToolPart {
  type: 'tool';
  /** null while streaming, until the call has finished. */
  callId: string | null;
  name: string;
  /** Parsed from JSON when they were JSON text; `{}` until the turn's end while streaming. */
  arguments: JsonValue;
  state: 'pending' | 'result' | 'error';
  /** With state 'result': the text the model was given. */
  result?: string;
  /** With state 'error': why the call failed. */
  error?: string;
}

/** Stored content the model (read_content) or a skill read. */
export interface ChatRetrievedPart {
  type: 'retrieved';
  callId: string | null;
  ref: string;
  state: 'pending' | 'result' | 'error';
  found?: boolean;
  result?: string;
  error?: string;
}

/** A question the turn left open for the person (a skill's askClarification). */
export interface ChatClarificationPart {
  type: 'clarification';
  question: string;
  options: string[];
}

export type ChatPart = ChatTextPart | ChatToolPart | ChatRetrievedPart | ChatClarificationPart;

export interface UIMessage {
  /** The history's message id; 'local:N' for what only this page has (an answer as it
   * streams, a message the runtime never took). */
  id: string;
  role: 'user' | 'assistant';
  parts: ChatPart[];
  /**
   * user: 'sent', 'failed' (kept in history, no answer), 'stopped', 'not-sent' (the
   * runtime never took it). assistant: 'streaming', 'done', 'stopped' (the partial answer;
   * history keeps its text, marked cancelled, so a reload reads it back 'stopped'), 'failed'.
   */
  status: 'sent' | 'failed' | 'stopped' | 'not-sent' | 'streaming' | 'done';
  error: ChatError | null;
  /** On a reply made in this page: the id of the message it answers. */
  replyTo?: string;
  /**
   * An answer's run (what `rt.why(runId)` explains): from the turn's result, or, for an
   * answer read from history, from its message id (`<runId>:assistant`). Null while it
   * streams or when unknown; absent on a person's message.
   */
  runId?: string | null;
}

export type ChatStatus = 'ready' | 'submitted' | 'streaming' | 'error';

/**
 * A conversation with a runtime, like the Vercel AI SDK's useChat but framework-free. Every
 * change replaces `messages` with a new array (so a view can compare by identity) and calls
 * the subscribers. History is append-only: edit() and regenerate() send a new turn at the end
 * and the turns after the edited message stay, in the transcript and in what the model sees.
 * The methods that send reject with AgrunError code 'chat_busy' while a turn runs.
 */
export interface Chat {
  readonly messages: UIMessage[];
  readonly status: ChatStatus;
  /** The last turn's error; null once a turn succeeds. */
  readonly error: ChatError | null;
  /** The last turn's result (a stopped turn's too); null before one or when the runtime refused it. */
  readonly lastResult: RunResult | null;
  readonly runtime: Runtime;
  /** Resolves once the turn has ended, however it ended (see `status` and `error`). */
  send(text: string): Promise<void>;
  /** Stop the running turn; the partial answer stays, marked 'stopped'. */
  stop(): void;
  /** Ask the last question again as a new turn. */
  regenerate(): Promise<void>;
  /** Send `text` as a new turn in place of user message `id` ('chat_unknown_message'). */
  edit(id: string, text: string): Promise<void>;
  /** Send a failed, stopped or not-sent message again (the last user message by default). */
  retry(id?: string): Promise<void>;
  /** Read the session's history again. */
  reload(): void;
  /** Returns the function that unsubscribes. */
  subscribe(listener: (chat: Chat) => void): () => void;
}

/** A chat controller on `runtime`, starting from the session's history. */
export declare function createChat(runtime: Runtime): Chat;

/** The text parts of a message, joined by blank lines (what a Copy button copies). */
export declare function messageText(message: UIMessage): string;

// ---------------------------------------------------------------------------------------------
// Errors

/** The stable codes a page can branch on; more may come (hence the open string). */
export type AgrunErrorCode =
  | 'agrun_error'
  | 'config_error'
  | 'boot_failed'
  | 'interpreter_failed'
  | 'internal_error'
  | 'closed'
  | 'cancelled'
  | 'invalid_input'
  | 'unknown_skill'
  | 'duplicate_skill'
  | 'invalid_memory_entry'
  | 'reentrant_call'
  | 'helpers_closed'
  | 'read_only'
  | 'output_not_serializable'
  | 'worker_unsupported'
  | 'content_ref_not_found'
  | 'invalid_context_request'
  | 'context_building_failed'
  | 'context_build_cancelled'
  | 'package_fetch_failed'
  | 'package_load_failed'
  | 'package_hash_mismatch'
  | 'package_install_failed'
  | 'package_conflict'
  | 'storage_error'
  | 'storage_open_failed'
  | 'storage_closed'
  | 'storage_retryable'
  | 'storage_fatal'
  | 'storage_schema_too_new'
  | 'storage_degraded'
  | 'session_not_found'
  | 'import_rejected'
  | (string & {});

export interface AgrunErrorOptions {
  code?: AgrunErrorCode;
  cause?: unknown;
  details?: object;
}

export declare class AgrunError extends Error {
  constructor(message: string, options?: AgrunErrorOptions);
  code: AgrunErrorCode;
  details?: object;
  /** For an error raised in Python: its class name there (e.g. 'UnknownSkillError'). */
  pythonType?: string;
  /** For an aborted run (name 'AbortError', code 'cancelled'): the cancelled result. */
  result?: RunResult;
}

/** The page passed an option or value agrun cannot use (default code 'config_error'). */
export declare class AgrunConfigError extends AgrunError {}

/** A vendored file could not be loaded, or Pyodide could not start (code 'boot_failed'). */
export declare class AgrunBootError extends AgrunError {}
/** A run that did not succeed, thrown by `result.throwIfFailed()`; `code` is the run's error code. */
export declare class RunFailedError extends AgrunError {
  readonly result: RunResult;
}
