// agrun's JavaScript face: createRuntime() boots Pyodide from the files beside this module,
// installs agrun's wheels and hands back a runtime whose results are plain JS objects.
import { resolveIndexURL } from './boot.js';
import { startEngine } from './engine.js';
import { AgrunBootError, AgrunConfigError, AgrunError } from './errors.js';
import { createHost, describeSkills } from './host.js';
import { checkOptions, describe, pick } from './options.js';
import { checkPackages, checkPythonSkills } from './page-packages.js';
import { startRemoteEngine } from './remote.js';
import { Runtime } from './runtime.js';
import { checkStore, openStore } from './session-store.js';
import { MAX_ID_LENGTH } from './storage/index.js';

export { AgrunBootError, AgrunConfigError, AgrunError };
export { createChat, messageText } from './widget/chat.js';

const RUNTIME_OPTIONS = {
  indexURL: 'string',
  onProgress: 'function',
  onEvent: 'function',
  skills: 'array',
  defaultSkill: 'string',
  maxCycles: 'number',
  skillTimeoutMs: 'number',
  countTokens: 'function',
  sessionId: 'string',
  storage: 'store',
  dbName: 'string',
  onStorageDegraded: 'function',
  onStorageRestored: 'function',
  globalMemory: 'object',
  provider: 'provider',
  providerTimeoutMs: 'number',
  embedder: 'embedder',
  model: 'string',
  systemPrompt: 'string',
  contextWindow: 'number',
  maxReplyTokens: 'number',
  temperature: 'number',
  maxCorrections: 'number',
  runTokenBudget: 'number',
  tokenFactor: 'number',
  packages: 'array',
  pythonSkills: 'array',
  pyodideHttp: 'boolean',
  redactSecrets: 'boolean',
  memoryExtraction: 'string',
  memoryCommands: 'boolean',
  contentStore: 'contentStore',
  sensitivityFilter: 'function',
  ranker: 'function',
  compressors: 'object',
  redactor: 'function',
  worker: 'boolean',
};

/**
 * Boot agrun and create a runtime.
 * @param {import('./agrun').RuntimeOptions} [options]
 * @returns {Promise<Runtime>}
 */
export async function createRuntime(options) {
  const opts = checkOptions('createRuntime', options, RUNTIME_OPTIONS);
  const prepared = prepare(opts);
  const progress = reporter(opts.onProgress);
  if (opts.worker) return new Runtime(await startRemoteEngine(prepared, opts, progress));
  const store = openStore(opts);
  const provider = typeof opts.provider === 'function' ? opts.provider : undefined;
  const embed = typeof opts.embedder === 'function' ? opts.embedder : undefined;
  const skills = (opts.skills ?? []).slice();
  const host = createHost({ ...pick(opts, HOOKS), skills, store, provider, embed });
  return new Runtime(await startEngine(prepared, host, store, progress));
}

// Everything about the options that can be checked before booting, and what the engine needs
// from them (plain data, so it can cross to a worker).
function prepare(opts) {
  checkIdentifier('sessionId', opts.sessionId);
  checkIdentifier('dbName', opts.dbName);
  checkStore(opts.storage);
  if (opts.worker) refuseInWorker(opts);
  const config = {
    storage: opts.storage !== false,
    sessionId: opts.sessionId ?? 'default',
    globalMemory: globalMemoryEnabled(opts.globalMemory),
    skills: describeSkills(opts.skills ?? []),
    pythonSkills: checkPythonSkills(opts.pythonSkills),
    events: Boolean(opts.onEvent),
    countTokens: Boolean(opts.countTokens),
    provider: describeModel('provider', opts.provider, '(request, { signal, onToken }) => reply'),
    embedder: describeModel('embedder', opts.embedder, '(texts) => Promise<number[][]>'),
    sensitivityFilter: Boolean(opts.sensitivityFilter),
    ranker: Boolean(opts.ranker),
    compressors: checkCompressors(opts.compressors),
    redactor: Boolean(opts.redactor),
    ...pick(opts, [
      'defaultSkill', 'maxCycles', 'skillTimeoutMs', 'model', 'systemPrompt', 'contextWindow',
      'maxReplyTokens', 'temperature', 'maxCorrections', 'runTokenBudget', 'tokenFactor',
      'redactSecrets', 'memoryExtraction', 'memoryCommands', 'contentStore', 'providerTimeoutMs',
    ]),
  };
  checkDuration('providerTimeoutMs', opts.providerTimeoutMs);
  const wheels = checkPackages(opts.packages);
  return { config, indexURL: resolveIndexURL(opts.indexURL), wheels, pyodideHttp: Boolean(opts.pyodideHttp) };
}

// The page's functions Python calls (synchronously, inside a turn) through the host.
const HOOKS = ['onEvent', 'countTokens', 'sensitivityFilter', 'ranker', 'compressors', 'redactor'];

// The data types a page may compress its own way: which ones it gave.
function checkCompressors(compressors) {
  if (compressors === undefined) return [];
  for (const [kind, compress] of Object.entries(compressors)) {
    if (!['tool_output', 'artifact'].includes(kind) || typeof compress !== 'function') {
      throw new AgrunConfigError(
        `createRuntime: option 'compressors' maps 'tool_output' and 'artifact' to functions (text, { limit, countTokens }) => [[start, end], ...], got ${describe(kind)} => ${describe(compress)}`,
      );
    }
  }
  return Object.keys(compressors);
}

// Python calls these hooks synchronously inside a turn; a worker cannot wait for the page.
function refuseInWorker(opts) {
  for (const name of HOOKS.filter((hook) => hook !== 'onEvent')) {
    if (opts[name] !== undefined) {
      throw new AgrunConfigError(
        `createRuntime: option '${name}' is called synchronously inside a turn, which a runtime in a worker cannot do across threads: leave 'worker' off to use it`,
        { code: 'worker_unsupported' },
      );
    }
  }
}

// The model (`provider`) or embedding model (`embedder`) a page asked for, as Python builds
// it: its own function (called through the host), or an OpenAI-compatible server reached
// with the browser's fetch (which a runtime in a worker can use too). The API key is passed
// to Python once, kept in that object, and never stored or logged.
function describeModel(option, value, shape) {
  if (value === undefined) return undefined;
  if (typeof value === 'function') return { kind: 'function' };
  const described = checkOptions(`createRuntime: ${option}`, value, {
    kind: 'string', baseUrl: 'string', model: 'string', apiKey: 'string', timeoutMs: 'number',
    idleTimeoutMs: 'number',
  });
  if (described.kind !== 'openai' || !/^https?:\/\//.test(described.baseUrl ?? '')) {
    throw new AgrunConfigError(
      `createRuntime: option '${option}' must be a function ${shape}, or { kind: 'openai', baseUrl: 'http(s)://…/v1', model?, apiKey? }`,
    );
  }
  checkDuration(`${option}.timeoutMs`, described.timeoutMs);
  checkDuration(`${option}.idleTimeoutMs`, described.idleTimeoutMs);
  return described;
}

// A deadline in milliseconds: a positive number (0 or less would end every call at once).
function checkDuration(option, value) {
  if (value !== undefined && !(value > 0)) {
    throw new AgrunConfigError(`createRuntime: option '${option}' must be a positive number of milliseconds, got ${describe(value)}`);
  }
}

// A session id or database name: a non-empty string a store can key on.
function checkIdentifier(option, value) {
  if (value === undefined) return;
  if (!value.trim() || value.length > MAX_ID_LENGTH) {
    throw new AgrunConfigError(
      `createRuntime: option '${option}' must be a non-empty string of at most ${MAX_ID_LENGTH} characters, got ${describe(value)}${value.length > 40 ? ` (${value.length} characters)` : ''}`,
    );
  }
  if (!value.isWellFormed()) {
    // Accepted, every commit would fail to store it: each run an internal_error.
    throw new AgrunConfigError(
      `createRuntime: option '${option}' holds a lone surrogate: it is not Unicode text and cannot be stored; pass ${option}.toWellFormed()`,
    );
  }
}

function globalMemoryEnabled(globalMemory) {
  if (globalMemory === undefined) return true;
  checkOptions('createRuntime: globalMemory', globalMemory, { enabled: 'boolean' });
  return globalMemory.enabled !== false;
}


// A page's progress callback must never break the boot: its errors are reported, not thrown.
function reporter(onProgress) {
  return (event) => {
    if (!onProgress) return;
    try {
      onProgress(event);
    } catch (error) {
      console.warn('agrun: onProgress threw', error);
    }
  };
}
