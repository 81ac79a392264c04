// A page of agrun, in TypeScript: it exercises every public function and type of agrun's
// JavaScript face (agrun.js, storage.js, offline.js, providers/wllama.js) the way a page would.
// Not shipped in dist/: tools/typecheck.sh checks it with `tsc --noEmit --strict` against the
// declarations beside agrun.js, so a declaration that drifts from real use fails the build.
// The `@ts-expect-error` lines are mistakes the declarations must refuse.
import {
  AgrunBootError,
  AgrunConfigError,
  AgrunError,
  createChat,
  createRuntime,
  settled,
  testModel,
  tool,
  messageText,
  type AgrunEvent,
  type Chat,
  type ChatPart,
  type ContextPack,
  type ContextRequest,
  type JsonValue,
  type Message,
  type EmbedderFunction,
  type ProviderFunction,
  type ProviderReply,
  type RunResult,
  type Runtime,
  type RuntimeOptions,
  type Skill,
  type StreamItem,
} from '../agrun.js';
import { registerOffline } from '../offline.js';
import { createWllamaEmbedder, createWllamaProvider } from '../providers/wllama.js';
import {
  DEFAULT_DB_NAME,
  EXPORT_FORMAT,
  FATAL_ERROR_NAMES,
  FORMAT_VERSION,
  ImportRejectedError,
  MAX_ID_LENGTH,
  SCHEMA_VERSION,
  STORE_METHODS,
  SchemaTooNewError,
  SessionNotFoundError,
  StorageClosedError,
  StorageError,
  StorageOpenError,
  createIndexedDbSessionStore,
  createMemorySessionStore,
  createResilientSessionStore,
  createSessionStore,
  isFatalStorageError,
  withSessionLock,
  type SessionStore,
  type StorageDegradedEvent,
} from '../storage.js';

// ---------------------------------------------------------------------------------------------
// The page

const transcript = document.querySelector<HTMLOListElement>('#transcript')!;
const status = document.querySelector<HTMLElement>('#status')!;
const form = document.querySelector<HTMLFormElement>('#chat')!;
const input = document.querySelector<HTMLInputElement>('#input')!;
const stop = document.querySelector<HTMLButtonElement>('#stop')!;

function say(role: 'user' | 'agent' | 'error' | 'note', text: string): HTMLLIElement {
  const item = document.createElement('li');
  item.className = role;
  item.textContent = text;
  transcript.append(item);
  return item;
}

function asText(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

// ---------------------------------------------------------------------------------------------
// Skills: a matcher, a tool with parameters, memory, content, inquiry and clarification

const remember: Skill = {
  name: 'remember',
  description: 'Remembers what the person asks it to note.',
  applies: (text) => text.toLowerCase().startsWith('note '),
  run(text, context, helpers) {
    const note = text.slice(5).trim();
    const checked = helpers.appendMemory({ kind: 'note', text: note, data: { chars: note.length } });
    const notes = context.memory.readAll().filter((entry) => entry.kind === 'note');
    // context.state is the run's state, read-only: a write would throw (and does not compile).
    // @ts-expect-error the state is read-only
    context.state.status = 'failed';
    return { noted: checked.text, before: notes.length, cycle: context.state.cycleCount };
  },
};

const weather: Skill = {
  name: 'weather',
  description: 'The weather in a city.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string', description: 'The city' } },
    required: ['city'],
  },
  async run(text, context, helpers) {
    const city = context.arguments?.['city'];
    if (typeof city !== 'string') {
      const decision = await helpers.askClarification('Which city?', {
        missing: 'city',
        options: ['Lisbon', 'Porto'],
      });
      if (decision.ask) return 'Which city?';
      return `Going on with ${asText(decision.value)} (${decision.reason})`;
    }
    helpers.noteSearch(`weather ${city}`);
    helpers.noteSources([city, { id: 'met-office', title: 'Met Office' }], 'met-office');
    helpers.noteRead({ id: 'met-office', title: 'Met Office' });
    if (helpers.signal.aborted) throw new Error('cancelled');
    return { city, sky: 'clear', asked: text };
  },
};

// A tool the Vercel AI SDK way: its arguments arrive parsed and checked against inputSchema.
const convert = tool<{ amount: number; to: 'EUR' | 'USD' }>({
  name: 'convert',
  description: 'Convert an amount of pounds.',
  inputSchema: {
    type: 'object',
    properties: { amount: { type: 'number' }, to: { enum: ['EUR', 'USD'] } },
    required: ['amount', 'to'],
  },
  async execute({ amount, to }, { state, helpers, abortSignal }) {
    if (abortSignal.aborted) throw new Error('cancelled');
    helpers.noteSearch(`convert ${amount}`);
    return { amount: amount * (to === 'EUR' ? 1.17 : 1.27), to, run: state.runId };
  },
});
// @ts-expect-error a tool needs an execute function
const noExecute = tool({ name: 'x', inputSchema: { type: 'object' } });
void noExecute;

const recall: Skill = {
  name: 'recall',
  applies: (text) => text.startsWith('recall '),
  async run(text, context, helpers) {
    const ref = text.slice(7).trim();
    try {
      const entry = await context.content(ref);
      return { ref: entry.ref, kind: entry.kind, bytes: entry.bytes };
    } catch (error) {
      if (error instanceof AgrunError && error.code === 'content_ref_not_found') {
        helpers.requestCycle('look again');
        return null;
      }
      throw error;
    }
  },
};

// ---------------------------------------------------------------------------------------------
// A provider function: the page's own model (here, a fake that streams and calls a tool)

const provider: ProviderFunction = async (request, { signal, onToken }) => {
  if (signal.aborted) throw new DOMException('aborted', 'AbortError');
  const last = request.messages.at(-1);
  if (last?.role === 'user' && request.tools.some((tool) => tool.function.name === 'weather')) {
    const reply: ProviderReply = {
      toolCalls: [{ id: 'call-1', name: 'weather', arguments: { city: 'Lisbon' } }],
      finishReason: 'tool_calls',
    };
    return reply;
  }
  const words = `You said: ${last?.content ?? ''}`.split(' ');
  for (const word of words) onToken(`${word} `);
  return { text: words.join(' ') + ' ', usage: { promptTokens: 12, completionTokens: words.length } };
};

// The in-page model on wllama, as an alternative provider.
const inPage = createWllamaProvider({ modelUrl: 'models/agrun-tiny.gguf', nCtx: 2048 });
const providers: Record<string, ProviderFunction> = { fake: provider, wllama: inPage };
// Recall by meaning: a sentence-embedding model in the page, or a page function of its own.
const embedder: EmbedderFunction = createWllamaEmbedder({ modelUrl: 'models/minilm-l6-q8.gguf' });
const oneHot: EmbedderFunction = async (texts) => texts.map((t) => new Float32Array([t.length, 1]));

// ---------------------------------------------------------------------------------------------
// Events, storage callbacks, hooks

function onEvent(event: AgrunEvent): void {
  switch (event.kind) {
    case 'RunStarted':
      status.textContent = `run ${event.runId}: ${event.inputChars} characters`;
      break;
    case 'ModelCallFinished':
      status.textContent = `model: ${event.finishReason}, ${event.usage?.completionTokens ?? '?'} tokens`;
      break;
    case 'ToolCallFinished':
      say('note', `${event.tool}: ${event.outcome}`);
      break;
    case 'RunFailed':
      say('error', `${event.error.code}: ${event.error.message}`);
      break;
    case 'ContextPackBuilt':
      status.textContent = `pack ${event.packDigest.slice(0, 8)}: ${event.budgetUsed}/${event.budgetLimit}`;
      break;
    case 'ContextBuildingFailed':
      say('error', `context: ${event.reason} (needed ${event.needed ?? '?'})`);
      break;
    default:
      break;
  }
}

function onStorageDegraded(event: StorageDegradedEvent): void {
  say('error', `Storage fell back to memory (${event.reason} in ${event.method})`);
}

const options: RuntimeOptions = {
  indexURL: '../pyodide/',
  onProgress: ({ stage, loaded, total }) => {
    status.textContent = `Loading ${stage} (${loaded}/${total})`;
  },
  onEvent,
  skills: [remember, weather, recall, convert],
  defaultSkill: 'remember',
  maxCycles: 4,
  skillTimeoutMs: 30_000,
  sessionId: 'example',
  storage: 'indexeddb',
  dbName: DEFAULT_DB_NAME,
  onStorageDegraded,
  onStorageRestored: ({ merged }) => say('note', `Storage is back; ${merged} turns merged`),
  globalMemory: { enabled: true },
  provider: providers['fake'] ?? provider,
  embedder: embedder ?? oneHot,
  model: 'fake-1',
  systemPrompt: 'You are terse.',
  contextWindow: 4096,
  maxReplyTokens: 256,
  temperature: 0,
  maxCorrections: 1,
  runTokenBudget: 8000,
  tokenFactor: 1.2,
  packages: [{ url: 'wheels/my_skills-1.0-py3-none-any.whl', sha256: 'a'.repeat(64) }],
  pythonSkills: ['my_skills:lookup'],
  pyodideHttp: false,
  redactSecrets: true,
  memoryExtraction: 'rules',
  memoryCommands: true,
  contentStore: { maxEntries: 32, maxBytes: 500_000, ttlMs: null, keepToolOutputs: true, keepFailures: ['skill_error'] },
  countTokens: (text) => Math.ceil(text.length / 4),
  sensitivityFilter: (entry) => (JSON.stringify(entry).includes('patient') ? 'patient data' : null),
  ranker: (query, documents) => documents.map((doc) => (doc.includes(query) ? 1 : 0)),
  compressors: { toolOutput: (text, { limit, countTokens }) => (countTokens(text) <= limit ? [[0, text.length]] : [[0, limit * 4]]) },
  redactor: (text) => text.replace(/sk-\w+/g, '[key]'),
};

// Options the declarations refuse, as createRuntime would at run time.
// @ts-expect-error an unknown option (createRuntime throws 'unknown option')
const misspelt: RuntimeOptions = { maxCycle: 3 };
// @ts-expect-error a synchronous hook in worker mode (code 'worker_unsupported')
const hookInWorker: RuntimeOptions = { worker: true, countTokens: (text: string) => text.length };
// @ts-expect-error an OpenAI provider needs an http(s) base URL
const badServer: RuntimeOptions = { provider: { kind: 'openai', baseUrl: 'localhost:8080/v1' } };
const server: RuntimeOptions = { worker: true, provider: { kind: 'openai', baseUrl: 'http://127.0.0.1:8080/v1', model: 'tiny' } };
// The test model calls every tool with schema-valid arguments: a page's tools tested offline.
const tested: RuntimeOptions = { skills: [convert], provider: testModel({ callTools: ['convert'] }) };
void [misspelt, hookInWorker, badServer, server, tested];

// ---------------------------------------------------------------------------------------------
// Running turns: run() with a signal and tokens, stream(), errors by code

let controller: AbortController | null = null;

async function turn(rt: Runtime, text: string): Promise<RunResult | null> {
  controller = new AbortController();
  const reply = say('agent', '');
  try {
    const result = await rt.run(text, {
      signal: controller.signal,
      onToken: (piece) => {
        reply.textContent += piece;
      },
    });
    if (result.state.status === 'failed') {
      reply.className = 'error';
      reply.textContent = result.error?.message ?? 'failed';
    } else {
      reply.textContent = asText(result.output);
    }
    for (const step of result.steps) console.debug(step.index, step.action, step.detail);
    return result;
  } catch (error) {
    if (error instanceof AgrunError && error.name === 'AbortError') {
      reply.textContent = `Stopped (${error.result?.state.status ?? 'cancelled'})`;
      return error.result ?? null;
    }
    if (error instanceof AgrunConfigError) {
      reply.textContent = error.code === 'reentrant_call' ? 'Busy' : error.message;
      return null;
    }
    throw error;
  } finally {
    controller = null;
  }
}

async function streamed(rt: Runtime, text: string): Promise<RunResult | undefined> {
  const reply = say('agent', '');
  let result: RunResult | undefined;
  for await (const item of rt.stream(text, { skill: 'weather' })) {
    const seen: StreamItem = item;
    if (seen.type === 'token') reply.textContent += seen.text;
    else if (seen.type === 'event' && seen.event.kind === 'SkillSelected') say('note', `skill: ${seen.event.skill}`);
    else if (seen.type === 'result') result = seen.result;
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// What the runtime keeps: history, memory, content, continuity, global memory, packs

function showHistory(history: Message[]): void {
  for (const message of history) {
    if (message.role === 'user' && message.author === 'person') say('user', message.content);
    else if (message.role === 'assistant') say('agent', message.contentRef ? `${message.content} (${message.contentBytes} bytes)` : message.content);
  }
}

function explain(pack: ContextPack | null): string {
  if (pack === null) return 'No model call yet';
  const used = pack.layers.L0.map((entry) => `${entry.kind}:${entry.sources.join(',')}`);
  const dropped = pack.compressionMetadata.dropped.map((item) => `${item.count} ${item.kind} (${item.reason})`);
  return `${pack.budgetUsed}/${pack.budgetLimit}; used ${used.join(' ')}; dropped ${dropped.join(', ')}`;
}

async function inspect(rt: Runtime): Promise<void> {
  const memory = rt.memory();
  say('note', `${memory.length} memory entries; last: ${memory.at(-1)?.text ?? '-'}`);
  const reply = rt.history().findLast((message) => message.contentRef !== undefined);
  if (reply?.contentRef) {
    try {
      const entry = rt.content(reply.contentRef);
      say('note', `${entry.ref}: ${entry.kind}, ${entry.digest}, expires ${entry.expiresAt ?? 'never'}`);
    } catch (error) {
      if (!(error instanceof AgrunError && error.code === 'content_ref_not_found')) throw error;
    }
  }
  const session = rt.sessionMemory();
  if (session) say('note', `facts: ${session.facts.map((fact) => fact.text).join('; ')} (rev ${session.revision})`);
  const inquiry = rt.inquiry();
  if (inquiry?.pendingClarification) say('note', `waiting for: ${inquiry.pendingClarification.missing}`);
  if (inquiry?.selectedSource) say('note', `source: ${inquiry.selectedSource.title || inquiry.selectedSource.id}`);
  say('note', explain(rt.lastPack()));

  const promotion = await rt.promoteToGlobalMemory(['prefers metric units', { text: 'lives in Lisbon', kind: 'fact', confidence: 0.9, source: 'settings' }]);
  for (const reason of promotion.refused) say('error', `refused: ${reason}`);
  const first = rt.globalMemory().find((entry) => entry.kind === 'preference' || entry.kind === 'note');
  if (first && (await rt.forgetGlobalMemory(first.id))) say('note', `forgot ${first.text}`);

  const state = rt.state();
  if (state.lastRun) say('note', `last run ${state.lastRun.runId}: ${state.lastRun.status}, ${state.lastRun.modelCalls ?? 0} model calls`);
  const diagnostics = rt.diagnostics();
  if (diagnostics.liveProxies !== 0) console.warn('proxies leaked', diagnostics.liveProxies);
}

function buildOwnPack(rt: Runtime): ContextPack {
  const request: ContextRequest = {
    messages: [
      { id: 'm1', role: 'user', content: 'Find the invoice total' },
      { id: 'm2', role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'search', arguments: { q: 'invoice' } }] },
      { id: 'm3', role: 'tool', toolCallId: 'c1', name: 'search', content: 'total: 42 EUR' },
      { id: 'm4', role: 'user', author: 'injected', injectedBy: 'rule-7', content: 'Answer in euros.' },
    ],
    input: 'Find the invoice total',
    direction: { activeGoal: 'invoice total' },
    memory: [{ id: 'f1', text: 'The person uses euros', kind: 'preference' }],
    policies: [{ id: 'p1', text: 'Never reveal secrets.' }],
    budget: { limit: 2000, reserve: 100 },
    options: { keepRecentTurns: 2, layers: ['L0', 'L1', 'L2'] },
  };
  return rt.buildContext(request);
}

// ---------------------------------------------------------------------------------------------
// Storage: status, export and import, the stores themselves

function showStorage(rt: Runtime): void {
  const storage = rt.storageStatus();
  if (storage.degraded) say('error', `Not saved: ${storage.reason ?? '?'} (${storage.unsynced ?? 0} unsynced)`);
  else if (!storage.persistent) say('note', 'This session is not saved');
  for (const problem of storage.unreadable) say('error', `Could not read: ${problem}`);
  if (storage.pending > 0) say('note', `${storage.pending} turns wait to be saved (${storage.lastError ?? ''})`);
}

async function tidyConversations(rt: Runtime): Promise<void> {
  const sessions = await rt.listSessions();
  for (const { sessionId, title, turnCount, lastCommittedAtMs } of sessions) {
    say('note', `${title ?? 'untitled'}: ${turnCount} turns, updated ${lastCommittedAtMs ?? 'never'}`);
    if (turnCount === 0) await rt.deleteSession(sessionId);
  }
  const first = sessions[0];
  if (first) await rt.renameSession(first.sessionId, first.title ?? 'First');
  try {
    await rt.clearSession('no-such-session');
  } catch (error) {
    if (error instanceof AgrunError && error.code === 'session_not_found') say('note', error.message);
  }
}

async function moveSession(from: Runtime, to: Runtime): Promise<void> {
  const file = await from.exportSession();
  try {
    await to.importSession(file, { replace: true });
  } catch (error) {
    if (error instanceof AgrunError && error.code === 'import_rejected') say('error', error.message);
    else throw error;
  }
}

async function storesByHand(): Promise<SessionStore> {
  const memory = createMemorySessionStore({ maxImportBytes: 1 << 20 });
  const database = createIndexedDbSessionStore({ dbName: 'example-db', durability: 'relaxed' });
  const resilient = createResilientSessionStore(database, { fallback: memory, onStorageDegraded, retryAfterMs: 5000 });
  const page = createSessionStore({ dbName: 'example-db', onStorageDegraded });
  await withSessionLock('example', async () => {
    await page.commitTurn({ sessionId: 'example', turnId: 't1', messages: [{ id: 'm1', role: 'user', content: 'hi' }] });
  });
  const sessions = await page.listSessions();
  say('note', `${sessions.length} sessions in ${database.dbName} (schema ${SCHEMA_VERSION}, ${EXPORT_FORMAT} v${FORMAT_VERSION})`);
  try {
    const text = await resilient.exportSession('missing');
    await memory.importSession(text);
  } catch (error) {
    if (error instanceof SessionNotFoundError) say('note', `no session ${error.sessionId}`);
    else if (error instanceof ImportRejectedError || error instanceof StorageClosedError) say('error', error.message);
    else if (error instanceof SchemaTooNewError) say('error', `database v${error.found} > v${error.known}`);
    else if (error instanceof StorageOpenError || (error instanceof StorageError && error.fatal)) say('error', error.message);
    else if (isFatalStorageError(error)) say('error', 'storage is gone');
    else throw error;
  }
  if (resilient.isDegraded()) say('note', resilient.status().backend);
  say('note', `${STORE_METHODS.length} store methods; ids up to ${MAX_ID_LENGTH}; fatal: ${[...FATAL_ERROR_NAMES].join(' ')}`);
  return page;
}

// ---------------------------------------------------------------------------------------------
// Boot

async function main(): Promise<void> {
  const registration = await registerOffline();
  say('note', registration ? `Offline-ready (scope ${registration.scope})` : 'Online only');

  let rt: Runtime;
  try {
    rt = await createRuntime(options);
  } catch (error) {
    if (error instanceof AgrunBootError) status.textContent = `agrun could not start: ${error.message}`;
    else if (error instanceof AgrunConfigError) status.textContent = `Bad option (${error.code}): ${error.message}`;
    throw error;
  }
  const worker = await createRuntime({ worker: true, storage: await storesByHand(), skills: [remember], sessionId: 'copy' });
  await worker.open();
  showHistory(rt.history());
  showStorage(rt);
  stop.addEventListener('click', () => controller?.abort());
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = input.value;
    input.value = '';
    say('user', text);
    void turn(rt, text).then(() => inspect(rt));
  });
  await streamed(rt, 'weather please');
  say('note', explain(buildOwnPack(rt)));
  await moveSession(rt, worker);
  await tidyConversations(rt);
  worker.close();
}

// Leaving the page from a script straight after a turn: its commit follows the answer.
async function leaveAfter(rt: Runtime, next: string): Promise<void> {
  await rt.run('save my place');
  await settled();
  location.assign(next);
}

// A bounded, typed turn: usage limits and an output schema; a limit passed is a failed run.
async function typedTurn(rt: Runtime): Promise<{ name: string } | null> {
  const result = await rt.run('the biggest city, as JSON', {
    usageLimits: { requestLimit: 3, toolCallsLimit: 5, totalTokensLimit: 20000 },
    outputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  });
  if (result.error?.code === 'usage_limit_exceeded' || result.error?.code === 'output_validation_failed') {
    return null;
  }
  const output = result.throwIfFailed().output as { name: string };
  return output;
}
void typedTurn;
void leaveAfter;
// The chat controller bound to a list: each part drawn by its type, the actions wired.
function partText(part: ChatPart): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'tool':
      return part.state === 'pending' ? `${part.name}…` : `${part.name}: ${part.result ?? part.error ?? ''}`;
    case 'retrieved':
      return `read ${part.ref}${part.found === false ? ' (not found)' : ''}`;
    case 'clarification':
      return `${part.question} ${part.options.join(' / ')}`;
  }
}

async function chatWith(rt: Runtime): Promise<Chat> {
  const chat = createChat(rt);
  const stop = chat.subscribe(({ messages, status, error }) => {
    for (const message of messages) say(message.role === 'user' ? 'user' : 'agent', message.parts.map(partText).join(' '));
    if (status === 'error' && error) say('error', `${error.kind}${error.retryable ? ' (retry?)' : ''}: ${error.message}`);
  });
  await chat.send('hello');
  const last = chat.messages.at(-1);
  if (last) say('note', messageText(last));
  if (chat.error?.retryable) await chat.retry();
  const first = chat.messages.find((m) => m.role === 'user');
  if (first) await chat.edit(first.id, 'hello again');
  await chat.regenerate();
  chat.stop();
  chat.reload();
  stop();
  return chat;
}
void chatWith;

// Mistakes the declarations refuse, as agrun would at run time (never called).
async function mistakes(rt: Runtime): Promise<void> {
  // @ts-expect-error run() takes text
  await rt.run(42);
  // @ts-expect-error an unknown run() option
  await rt.run('hi', { timeout: 5 });
  // @ts-expect-error usage limits are camelCase, as every JS option
  await rt.run('hi', { usageLimits: { request_limit: 3 } });
  // @ts-expect-error a global-memory kind that does not exist
  await rt.promoteToGlobalMemory([{ text: 'x', kind: 'secret' }]);
  // @ts-expect-error reads answer at once: content() is not a Promise
  await rt.content('ref').then((entry) => entry.body);
  // @ts-expect-error edit() names the message it replaces
  await createChat(rt).edit('new words');
}
void mistakes;

void main();
