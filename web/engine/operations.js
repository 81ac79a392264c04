// Each operation of a runtime, declared once. The page's Runtime (../runtime.js) checks what a
// page passes and calls its engine's method of the operation's name; the local engine
// (./engine.js) calls the Python bridge's method of that name in snake_case
// (py/agrun/adapters/pyodide/bridge.py); the remote engine (./remote.js) and the worker
// (./worker.js) derive from this list what crosses between them and what the page's mirror
// answers. A new operation is a method of the Python runtime, of the bridge, of runtime.js,
// and a line here.
//
// - `args`: its arguments in order (across to a worker, a payload with these names);
// - `queued`: it runs under the turn lock, one at a time, and answers with a Promise; in worker
//   mode it is a call to the worker, which answers with what changed, for the page's mirror;
// - `mirror`: in worker mode the page answers it at once from its mirror of the worker's
//   runtime, which the worker refreshes after every queued operation: 'whole' (sent whole),
//   'appended' (a list, sent as what was appended to it) or 'content' (the content store);
// - `pageOnly`: Python answers it synchronously, which a runtime in a worker cannot do: there
//   it throws code 'worker_unsupported', saying `why` and what to do `instead`.
// The engines write out the operations that need more than this: run (tokens and events as
// they come, the matchers' answers), content (the read replayed in the worker), and
// storageStatus and diagnostics (which add what only the page knows).
export const OPERATIONS = Object.freeze({
  open: { queued: true, args: [] },
  run: { queued: true, args: ['input', 'runOptionsJson'] },
  idle: { queued: true, args: [] },
  exportSession: { queued: true, args: [] },
  importSession: { queued: true, args: ['jsonText', 'replace'] },
  listSessions: { queued: true, args: [] },
  renameSession: { queued: true, args: ['sessionId', 'title'] },
  clearSession: { queued: true, args: ['sessionId'] },
  deleteSession: { queued: true, args: ['sessionId'] },
  promoteToGlobalMemory: { queued: true, args: ['entriesJson'] },
  forgetGlobalMemory: { queued: true, args: ['id'] },
  // A session's traces (up to 2 MB) are not mirrored: asked of the runtime, in a worker too.
  why: { queued: true, args: ['runId'] },
  whatIf: { queued: true, args: ['runId', 'optionsJson'] },
  // Under the session's lock too: no tab commits a turn between the push and the take-up.
  sync: { queued: true, args: [] },
  history: { mirror: 'appended', args: ['start'] },
  memory: { mirror: 'appended', args: ['start'] },
  content: { mirror: 'content', args: ['ref'] },
  state: { mirror: 'whole', args: [] },
  lastPack: { mirror: 'whole', args: [] },
  continuity: { mirror: 'whole', args: [] },
  storageStatus: { mirror: 'whole', args: [] },
  diagnostics: { mirror: 'whole', args: [] },
  buildContext: {
    args: ['requestJson'],
    pageOnly: { why: 'computes a pack synchronously', instead: 'read rt.lastPack()' },
  },
});

/** The operations declared `queued`, `[name, operation]` each. */
export const queuedOperations = () => Object.entries(OPERATIONS).filter(([, operation]) => operation.queued);

/** The operations the page's mirror answers with kind `kind` ('whole', 'appended', 'content'). */
export const mirroredOperations = (kind) =>
  Object.entries(OPERATIONS).filter(([, operation]) => operation.mirror === kind).map(([name]) => name);

/** The Python bridge's name for an operation: `exportSession` -> `export_session`. */
export const bridgeName = (name) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** An operation's arguments as the payload that crosses to a worker: `{ [arg]: value }`. */
export const payloadOf = (name, values) =>
  Object.fromEntries(OPERATIONS[name].args.map((arg, index) => [arg, values[index]]));

/** An operation's arguments from that payload, in order. */
export const argumentsOf = (name, payload) => OPERATIONS[name].args.map((arg) => payload[arg]);

/**
 * Give `prototype` a method for each operation it does not write out itself: `make(name,
 * operation)` makes it. An engine class calls this in a static block, where its private
 * fields are in reach of the methods `make` returns.
 */
export function defineOperations(prototype, make) {
  for (const [name, operation] of Object.entries(OPERATIONS)) {
    if (Object.hasOwn(prototype, name)) continue;
    Object.defineProperty(prototype, name, { value: make(name, operation), writable: true, configurable: true });
  }
}
