// Validation of the options a page passes: unknown names and wrong types fail loudly,
// listing what is accepted, instead of being ignored.
import { AgrunConfigError } from './errors.js';

/**
 * Check `options` against `schema` ({ name: 'string' | 'function' | 'object' | 'array' | 'number' |
 * 'boolean' | 'signal' }) and return a shallow copy.
 * @param {string} where  what the options are for, e.g. "createRuntime"
 */
export function checkOptions(where, options, schema) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new AgrunConfigError(`${where}: options must be an object, got ${describe(options)}`);
  }
  const accepted = Object.keys(schema).sort();
  for (const [name, value] of Object.entries(options)) {
    if (!(name in schema)) {
      throw new AgrunConfigError(
        `${where}: unknown option '${name}'. Accepted options: ${accepted.join(', ')}`,
      );
    }
    if (value !== undefined && !hasType(value, schema[name])) {
      throw new AgrunConfigError(
        `${where}: option '${name}' must be ${article(schema[name])}, got ${describe(value)}`,
      );
    }
  }
  return { ...options };
}

function hasType(value, type) {
  switch (type) {
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'signal':
      return typeof AbortSignal !== 'undefined' && value instanceof AbortSignal;
    case 'contentStore':
      return typeof value === 'boolean' || (typeof value === 'object' && value !== null && !Array.isArray(value));
    case 'provider':
    case 'embedder':
      return typeof value === 'function' || (typeof value === 'object' && value !== null && !Array.isArray(value));
    case 'store':
      return value === false || value === 'indexeddb' || value === 'memory' ||
        (typeof value === 'object' && value !== null && typeof value.commitTurn === 'function');
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return typeof value === type;
  }
}

function article(type) {
  if (type === 'signal') return 'an AbortSignal';
  if (type === 'store') return "'indexeddb', 'memory', false or a session store";
  if (type === 'provider') return "a function (request, { signal, onToken }) => reply or { kind: 'openai', baseUrl }";
  if (type === 'embedder') return "a function (texts) => vectors or { kind: 'openai', baseUrl }";
  return /^[aeiou]/i.test(type) ? `an ${type}` : `a ${type}`;
}

/** A short description of a value for error messages. */
export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === 'object') return `${article(value.constructor?.name ?? 'object')}`;
  return `${typeof value} ${String(value)}`;
}

/** The entries of `object` named in `names` that are set. */
export function pick(object, names) {
  return Object.fromEntries(names.filter((n) => object[n] !== undefined).map((n) => [n, object[n]]));
}
