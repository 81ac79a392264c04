// What this page's runtimes do after an answer: a turn's commit and trace
// (`commitAfterAnswer`), a model extraction. `settled()` waits for all of it, so a script
// can navigate away (or reload) without losing the turn it just got the answer of.

const keeping = new Set();

/** Track `promise` (what one runtime goes on with after an answer) until it settles. */
export function keep(promise) {
  const tracked = Promise.resolve(promise)
    .catch(() => {})
    .finally(() => keeping.delete(tracked));
  keeping.add(tracked);
}

/**
 * Resolves once every runtime of this page has kept the turns it answered: what runs after
 * `run()` resolves (the commit, the trace, a model extraction) is done. Turns still being
 * answered are not waited for.
 * @returns {Promise<void>}
 */
export async function settled() {
  while (keeping.size) await Promise.all([...keeping]);
}

// Also reachable without importing agrun (a test driver, a page's other scripts) under a
// registered symbol; it is the same function.
globalThis[Symbol.for('agrun.settled')] = settled;
