// Plain data: the only thing agrun lets cross between a page and Python.
// JSON.stringify drops functions and undefined and turns NaN into null without a word;
// a skill's output must not change on the way, so anything JSON cannot carry exactly is
// named by its path instead.

/** How deep plain data may nest (Python's MAX_PLAIN_DEPTH); a skill's output, half that. */
export const MAX_PLAIN_DEPTH = 64;
export const MAX_OUTPUT_DEPTH = 32;

/**
 * Why `value` is not plain data, or null when it is.
 * @returns {string | null} e.g. "$.items[2] is a Map, not plain data"
 */
export function findNonPlain(value, path = '$', seen = new Set(), maxDepth = MAX_PLAIN_DEPTH) {
  if (value === null || typeof value === 'boolean') return null;
  if (typeof value === 'string') return loneSurrogate(value, path);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return `${path} is ${value}, which JSON cannot carry`;
    return null;
  }
  if (typeof value !== 'object') {
    return `${path} is ${typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`}, not plain data`;
  }
  if (seen.has(value)) return `${path} contains itself (a cycle)`;
  // Python would refuse it (and its recursive code overflow on it): named here instead.
  if (seen.size >= maxDepth) return `${path} nests deeper than ${maxDepth} levels of lists and objects`;
  const isArray = Array.isArray(value);
  const proto = Object.getPrototypeOf(value);
  if (!isArray && proto !== Object.prototype && proto !== null) {
    return `${path} is a ${safeName(value)}, not plain data (use objects, arrays, strings, numbers, booleans, null)`;
  }
  seen.add(value);
  try {
    if (isArray) {
      // An index loop, not map/for-of: a sparse array's holes must be seen, not skipped.
      for (let i = 0; i < value.length; i += 1) {
        if (!(i in value)) return `${path}[${i}] is a hole in a sparse array, not plain data`;
        const problem = findNonPlain(value[i], `${path}[${i}]`, seen, maxDepth);
        if (problem) return problem;
      }
      return null;
    }
    for (const key of Object.keys(value)) {
      const problem = loneSurrogate(key, `${path} key`) ?? findNonPlain(value[key], `${path}.${key}`, seen, maxDepth);
      if (problem) return problem;
    }
    return null;
  } finally {
    seen.delete(value);
  }
}

// A UTF-16 surrogate on its own: JavaScript strings hold one, but no UTF-8 text (Python's
// stores, an export file) can.
function loneSurrogate(text, path) {
  if (text.isWellFormed()) return null;
  let at = 0;
  for (const char of text) {
    const code = char.codePointAt(0);
    if (code >= 0xd800 && code <= 0xdfff) {
      return `${path} holds a lone surrogate (U+${code.toString(16).toUpperCase()}) at character ${at}: it is not Unicode text and cannot be stored (use .toWellFormed())`;
    }
    at += 1;
  }
  return null;
}

function safeName(value) {
  try {
    return value.constructor?.name ?? 'object';
  } catch {
    return 'object';
  }
}

/** A deep-frozen copy of plain data, so a skill cannot change what it was shown. */
export function deepFreeze(value) {
  if (value && typeof value === 'object') {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/**
 * A deep, read-only copy of plain data that refuses every write by throwing, in strict and
 * sloppy code alike, while every read works: property access, `JSON.stringify`, spreading,
 * `structuredClone`. (A frozen object alone fails silently in sloppy code, and a Proxy
 * cannot be structured-cloned.) Each property is a getter, with a setter that throws; the
 * object is then frozen, so nothing can be added or deleted.
 */
export function readOnlyView(value, what) {
  if (!value || typeof value !== 'object') return value;
  const view = Array.isArray(value) ? new Array(value.length) : {};
  const refuse = (key) => () => {
    throw new TypeError(`${what} is read-only: the runtime owns it (a write to ${key} was refused)`);
  };
  for (const key of Object.keys(value)) {
    const item = readOnlyView(value[key], what);
    Object.defineProperty(view, key, { enumerable: true, get: () => item, set: refuse(key) });
  }
  return Object.freeze(view);
}

/**
 * What a thrown value says, whatever it is: an Error, a string, 42, null, a plain object,
 * or an Error whose `message` getter itself throws.
 */
export function describeThrown(thrown) {
  if (thrown instanceof Error || (thrown && typeof thrown === 'object' && 'message' in thrown)) {
    const name = read(() => String(thrown.name ?? 'Error'), 'Error');
    const message = read(() => String(thrown.message), '(its message could not be read)');
    return `${name}: ${message}`;
  }
  if (typeof thrown === 'string') return `the string ${JSON.stringify(thrown.slice(0, 500))}`;
  if (thrown === null || thrown === undefined) return `${thrown}`;
  if (typeof thrown === 'object') {
    return `an object ${read(() => JSON.stringify(thrown).slice(0, 500), '(unreadable)')}`;
  }
  return `${typeof thrown} ${read(() => String(thrown), '?')}`;
}

function read(get, fallback) {
  try {
    return get();
  } catch {
    return fallback;
  }
}
