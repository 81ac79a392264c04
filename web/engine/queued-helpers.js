// The skill helpers Python answers at once (appendMemory, requestCycle, noteSources,
// noteSearch, noteRead), checked in the page the way Python checks them. A page skill of a
// runtime in a worker gets its answer here, synchronously, and the call is applied in the
// worker after: so a bad entry throws inside the skill, where it was made, in both modes.
import { SCHEMAS } from '../storage/schemas.js';
import { schemaProblem } from '../storage/schema.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * Python's answer to helper `name` with `argument`, as the JSON envelope it would send:
 * `{ ok: true, result }` or `{ ok: false, error: { type, code, message, callersFault } }`.
 */
export function checkQueuedHelper(name, argument) {
  try {
    return { ok: true, result: CHECKS[name](argument) };
  } catch (error) {
    if (!(error instanceof HelperProblem)) throw error;
    return { ok: false, error: { type: error.type, code: error.code, message: error.message, callersFault: true } };
  }
}

class HelperProblem extends Error {
  constructor(type, code, message) {
    super(message);
    this.type = type;
    this.code = code;
  }
}

const configError = (message) => new HelperProblem('ConfigError', 'config_error', message);

const CHECKS = {
  appendMemory(entry) {
    const fail = (field, problem) =>
      new HelperProblem('MemoryEntryError', 'invalid_memory_entry', `memory entry field '${field}': ${problem}`);
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) {
      throw fail('entry', `expected a dict with 'text' (and optional 'kind', 'data'), got ${pythonType(entry)}`);
    }
    const problem = schemaProblem(SCHEMAS.memoryEntryRequest, entry);
    if (problem) {
      const [field, detail] = problem.includes(': ') ? problem.split(/: (.*)/s) : ['entry', problem];
      throw fail(field.split(/[.[]/)[0], detail);
    }
    const unsafe = unsafeInteger(entry.data ?? {}, '$');
    if (unsafe) throw fail('data', unsafe);
    return { kind: entry.kind ?? 'note', text: entry.text, data: entry.data ?? {} };
  },
  requestCycle(reason) {
    if (typeof reason !== 'string') throw configError(`request_cycle(reason) takes a string, got ${pythonType(reason)}`);
    return null;
  },
  noteSources({ candidates, selected }) {
    if (!Array.isArray(candidates)) throw configError(`note_sources(candidates) takes a list of sources, got ${pythonType(candidates)}`);
    candidates.forEach(checkSource);
    if (selected !== null && selected !== undefined) checkSource(selected);
    return null;
  },
  noteSearch(query) {
    if (typeof query !== 'string') throw configError(`note_search(query) takes a string, got ${pythonType(query)}`);
    return null;
  },
  noteRead(source) {
    checkSource(source);
    return null;
  },
};

function checkSource(value) {
  if (typeof value === 'string') return;
  if (value && typeof value === 'object' && !Array.isArray(value) && typeof value.id === 'string') return;
  throw configError(`a source is an id (str) or {'id', 'title'}, got ${pythonType(value)}`);
}

// Python reads JSON integers beyond 2**53 exactly, and then refuses them as not crossing back
// (JSON.stringify writes 1e21 and above with an exponent, which Python reads as a float).
function unsafeInteger(value, path) {
  if (typeof value === 'number') {
    return Number.isInteger(value) && Math.abs(value) > MAX_SAFE && Math.abs(value) < 1e21
      ? `${path} is the integer ${value}, beyond JavaScript's safe range (2**53 - 1)`
      : null;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const problem = unsafeInteger(item, Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`);
      if (problem) return problem;
    }
  }
  return null;
}

// The type name Python would report for a value parsed from JSON.
function pythonType(value) {
  if (value === null || value === undefined) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return 'dict';
}
