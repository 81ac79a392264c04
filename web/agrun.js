// agrun's JavaScript face: createRuntime() boots Pyodide from the files beside this module,
// installs agrun's wheels and hands back a runtime whose results are plain JS objects.
// dist/agrun.js is this module bundled into one file with what it imports (build.sh), but for
// the modules other entries and a page share with it (the boot's, the error classes, the
// heartbeat: build.sh's SHARED_MODULES). Every module this one's imports load is imported here
// too, flat, so the bundle names each shared module itself and the browser asks for all of
// them as soon as it reads it, not level by level (tests/test_js_imports.py keeps the list
// whole; docs/performance.md).
import './boot/snapshot.js';
import './boot/site-files.js';
import './engine/channel.js';
import './engine/heartbeat.js';
import './engine/operations.js';
import './engine/queued-helpers.js';
import './plain.js';
import './storage/indexeddb.js';
import './storage/memory.js';
import './storage/records.js';
import './storage/resilient.js';
import './storage/schema.js';
import './storage/schemas.js';
import './widget/chat-errors.js';
import './widget/chat-parts.js';
import './wire.js';
import { resolveIndexURL } from './boot/boot.js';
import { checkPackages, checkPythonSkills } from './boot/page-packages.js';
import { startEngine } from './engine/engine.js';
import { createHost, describeSkills } from './engine/host.js';
import { startRemoteEngine } from './engine/remote.js';
import { AgrunBootError, AgrunConfigError, AgrunError, RunFailedError } from './errors.js';
import { checkOptions, describe, pick } from './options.js';
import { DATA_OPTIONS, RUNTIME_OPTIONS } from './runtime-options.js';
import { Runtime } from './runtime.js';
import { checkStore, openStore } from './session-store.js';
import { MAX_ID_LENGTH } from './storage/index.js';
import { testModel, tool } from './tool.js';

export { AgrunBootError, AgrunConfigError, AgrunError, RunFailedError, testModel, tool };
export { createChat, messageText } from './widget/chat.js';
export { settled } from './engine/keeping.js';

/**
 * A provider that answers each model call with the reply recorded in a session export
 * (`rt.exportSession()`, or `Runtime.export_session()` in CPython), in order, and checks each
 * request matches the recorded one: a run that differs rejects with AgrunError code
 * 'replay_diverged' naming the first call that differs and how. For a page's own tests:
 * `createRuntime({ provider: replayProvider(text) })` runs a recorded conversation offline.
 * @param {string} exportText
 */
export function replayProvider(exportText) {
  if (typeof exportText !== 'string') {
    throw new AgrunConfigError(`replayProvider() takes a session export's text, got ${describe(exportText)}`);
  }
  return Object.freeze({ kind: 'replay', export: exportText });
}

// The page's own options (booting, the store, the worker), beside the runtime's: those are
// generated from the Python model that validates them (runtime-options.js).
const PAGE_OPTIONS = {
  indexURL: 'string',
  onProgress: 'function',
  storage: 'store',
  dbName: 'string',
  onStorageDegraded: 'function',
  onStorageRestored: 'function',
  onDataLoss: 'function',
  providerTimeoutMs: 'number',
  packages: 'array',
  pythonSkills: 'array',
  pyodideHttp: 'boolean',
  shippedSnapshot: 'boolean',
  worker: 'boolean',
  onSync: 'function',
};
const OPTIONS = { ...PAGE_OPTIONS, ...RUNTIME_OPTIONS };

/**
 * Boot agrun and create a runtime.
 * @param {import('./agrun').RuntimeOptions} [options]
 * @returns {Promise<Runtime>}
 */
export async function createRuntime(options) {
  const opts = checkOptions('createRuntime', options, OPTIONS);
  const prepared = prepare(opts);
  const progress = reporter(opts.onProgress);
  const syncing = { sync: opts.sync !== undefined && opts.sync !== null, onSync: opts.onSync };
  if (opts.worker) return new Runtime(await startRemoteEngine(prepared, opts, progress), syncing);
  const store = openStore(opts);
  const provider = typeof opts.provider === 'function' ? opts.provider : undefined;
  const embed = typeof opts.embedder === 'function' ? opts.embedder : undefined;
  const skills = (opts.skills ?? []).slice();
  const compressors = byDataType(opts.compressors);
  const host = createHost({ ...pick(opts, HOOKS), compressors, skills, store, provider, embed });
  return new Runtime(await startEngine(prepared, host, store, progress), syncing);
}

// Everything about the options that can be checked before booting, and what the engine needs
// from them (plain data, so it can cross to a worker): the runtime's data options as they are,
// which the bridge validates with the Python model, and what it needs to wire the functions.
function prepare(opts) {
  checkIdentifier('sessionId', opts.sessionId);
  checkIdentifier('dbName', opts.dbName);
  checkStore(opts.storage);
  if (opts.worker) refuseInWorker(opts);
  const config = {
    ...pick(opts, DATA_OPTIONS),
    storage: opts.storage !== false,
    sessionId: opts.sessionId ?? 'default',
    // The answer first: the page lives on after it, and the next operation waits for the
    // commit under the session's lock (docs/kernel.md).
    commitAfterAnswer: opts.commitAfterAnswer ?? true,
    globalMemory: globalMemoryEnabled(opts.globalMemory),
    skills: describeSkills(opts.skills ?? []),
    pythonSkills: checkPythonSkills(opts.pythonSkills),
    events: Boolean(opts.onEvent),
    countTokens: Boolean(opts.countTokens),
    provider: describeModel('provider', opts.provider, '(request, { signal, onToken }) => reply'),
    embedder: describeModel('embedder', opts.embedder, '(texts) => Promise<number[][]>'),
    sensitivityFilter: Boolean(opts.sensitivityFilter),
    ranker: Boolean(opts.ranker),
    compressors: Object.keys(byDataType(opts.compressors) ?? {}),
    redactor: Boolean(opts.redactor),
    ...pick(opts, ['providerTimeoutMs']),
  };
  checkDuration('providerTimeoutMs', opts.providerTimeoutMs);
  const wheels = checkPackages(opts.packages);
  return {
    config,
    indexURL: resolveIndexURL(opts.indexURL),
    wheels,
    pyodideHttp: Boolean(opts.pyodideHttp),
    shippedSnapshot: Boolean(opts.shippedSnapshot),
  };
}

// The page's functions Python calls (synchronously, inside a turn) through the host.
const HOOKS = ['onEvent', 'countTokens', 'sensitivityFilter', 'ranker', 'compressors', 'redactor'];

// The page's compressors ({ toolOutput, artifact }) by the data type Python names them with.
// Python's spelling (tool_output) is refused, naming the page's.
const COMPRESSIBLE = { toolOutput: 'tool_output', artifact: 'artifact' };

function byDataType(compressors) {
  if (compressors === undefined) return undefined;
  return Object.fromEntries(Object.entries(compressors).map(([kind, compress]) => {
    if (kind === 'tool_output') {
      throw new AgrunConfigError("createRuntime: option 'compressors' spells the data type 'toolOutput' (camelCase), not 'tool_output'");
    }
    if (!Object.hasOwn(COMPRESSIBLE, kind) || typeof compress !== 'function') {
      throw new AgrunConfigError(
        `createRuntime: option 'compressors' maps 'toolOutput' and 'artifact' to functions (text, { limit, countTokens }) => [[start, end], ...], got ${describe(kind)} => ${describe(compress)}`,
      );
    }
    return [COMPRESSIBLE[kind], compress];
  }));
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
  if (option === 'provider' && value?.kind === 'replay' && typeof value.export === 'string') {
    return { kind: 'replay', export: value.export };
  }
  // The test model (testModel() in tool.js) is Python's agrun.testing.TestModel.
  if (option === 'provider' && value?.kind === 'test') {
    const { kind, ...options } = value;
    return testModel(options);
  }
  const described = checkOptions(`createRuntime: ${option}`, value, {
    kind: 'string', baseUrl: 'string', model: 'string', apiKey: 'string', timeoutMs: 'number',
    idleTimeoutMs: 'number',
  });
  if (described.kind !== 'openai' || !/^https?:\/\//.test(described.baseUrl ?? '')) {
    throw new AgrunConfigError(
      `createRuntime: option '${option}' must be a function ${shape}, or { kind: 'openai', baseUrl: 'http(s)://…/v1', model?, apiKey? }${option === 'provider' ? ', or replayProvider(exportText)' : ''}`,
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
