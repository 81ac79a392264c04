// Plain data: the only thing agrun lets cross between a page and Python.
// JSON.stringify drops functions and undefined and turns NaN into null without a word;
// a skill's output must not change on the way, so anything JSON cannot carry exactly is
// named by its path instead.

/**
 * Why `value` is not plain data, or null when it is.
 * @returns {string | null} e.g. "$.items[2] is a Map, not plain data"
 */
export function findNonPlain(value, path = '$', seen = new Set()) {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return null;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return `${path} is ${value}, which JSON cannot carry`;
    return null;
  }
  if (typeof value !== 'object') {
    return `${path} is ${typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`}, not plain data`;
  }
  if (seen.has(value)) return `${path} contains itself (a cycle)`;
  const proto = Object.getPrototypeOf(value);
  const isArray = Array.isArray(value);
  if (!isArray && proto !== Object.prototype && proto !== null) {
    return `${path} is a ${value.constructor?.name ?? 'object'}, not plain data (use objects, arrays, strings, numbers, booleans, null)`;
  }
  seen.add(value);
  try {
    const entries = isArray ? value.map((item, i) => [`${path}[${i}]`, item]) :
      Object.entries(value).map(([key, item]) => [`${path}.${key}`, item]);
    for (const [at, item] of entries) {
      const problem = findNonPlain(item, at, seen);
      if (problem) return problem;
    }
    return null;
  } finally {
    seen.delete(value);
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
 * A view of `value` that throws on any attempt to change it, in strict and sloppy code alike
 * (a frozen object alone fails silently in sloppy code).
 */
export function readOnlyView(value, what) {
  if (!value || typeof value !== 'object') return value;
  const refuse = () => {
    throw new TypeError(`${what} is read-only: the runtime owns it`);
  };
  return new Proxy(value, {
    get: (target, key) => readOnlyView(target[key], what),
    set: refuse,
    defineProperty: refuse,
    deleteProperty: refuse,
    setPrototypeOf: refuse,
  });
}
