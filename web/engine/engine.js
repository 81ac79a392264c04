// The runtime itself, where Pyodide runs (the page, or a worker in worker mode): Python's
// bridge behind one queue and the session's lock, answering in plain JS values. The public
// Runtime (../runtime.js) checks what a page passes and calls an engine; so does a worker.
// Its operations are those ./operations.js declares: each calls the bridge's method of the
// same name, under the queue and lock when it is declared `queued`.
import { bootKind, bootMarks, bootPyodide, mark, whenFatal } from '../boot/boot.js';
import { enableHttp, installPackages } from '../boot/page-packages.js';
import { AgrunBootError, AgrunError } from '../errors.js';
import { errorFromPython, unwrap } from '../wire.js';
import { keep } from './keeping.js';
import { bridgeName, defineOperations } from './operations.js';

/**
 * Boot Pyodide (or join its boot), install the page's wheels and create the runtime.
 * @param {{ config: object, indexURL: string, wheels: object[], pyodideHttp?: boolean, shippedSnapshot?: boolean }} prepared
 *   what createRuntime checked: the bridge's config, the vendored folder, the page's wheels
 * @param {object} host the object Python calls into (./host.js)
 * @param {object | null} store the session store (web/storage/), or null
 */
export async function startEngine({ config, indexURL, wheels, pyodideHttp, shippedSnapshot }, host, store, progress) {
  const pyodide = await bootPyodide(indexURL, progress, { shipped: shippedSnapshot });
  // The page's own wheels go in before its Python skills are imported (web/boot/page-packages.js).
  await installPackages(pyodide, wheels);
  if (pyodideHttp) await enableHttp(pyodide);
  progress({ stage: 'runtime', loaded: 0, total: 1 });
  mark('page-packages');
  const module = pyodide.pyimport('agrun.adapters.pyodide.bridge');
  let bridge;
  try {
    bridge = module.create_bridge(JSON.stringify(config), host);
  } catch (cause) {
    throw new AgrunBootError(`agrun could not create its runtime: ${cause.message}`, { cause });
  } finally {
    module.destroy();
  }
  mark('bridge');
  if (typeof bridge === 'string') throw errorFromPython(JSON.parse(bridge).error);
  const engine = new LocalEngine(bridge, store, config.sessionId, host, pyodide);
  await engine.open();
  mark('open');
  progress({ stage: 'runtime', loaded: 1, total: 1 });
  return engine;
}

/** Python's runtime behind a queue: one operation at a time, each under the session's lock. */
export class LocalEngine {
  // What the last turn went on with after its answer (settled, never rejects): close() waits.
  #kept = Promise.resolve();
  #bridge;
  #store;
  #sessionId;
  #host;
  #pyodide;
  #tail = Promise.resolve(); // the runtime's operations, one after the other

  constructor(bridge, store, sessionId, host, pyodide) {
    this.#bridge = bridge;
    this.#store = store;
    this.#sessionId = sessionId;
    this.#host = host;
    this.#pyodide = pyodide;
  }

  /** How many of the page's functions this runtime is inside now (see Runtime#refuseReentry). */
  get inside() {
    return this.#host.inside;
  }

  /** The Web Lock each operation holds (null: none), shared by every runtime on the session. */
  get lockName() {
    return this.#store?.withSessionLock ? `agrun:turn:${this.#sessionId}` : null;
  }

  /**
   * One turn; `sink` ({ onToken, onEvent }) hears this run's tokens and events. It resolves
   * with the answer; the turn's keeping (its commit and trace with `commitAfterAnswer`, a
   * model extraction) goes on after it, still under the lock, so the next operation starts
   * from its result (and `settled()` waits for it).
   */
  async run(input, runOptionsJson, signal, sink) {
    let answer;
    const answered = new Promise((resolve) => {
      answer = resolve;
    });
    const turn = this.#locked(async () => {
      this.#host.sink = sink;
      let reply;
      try {
        reply = await this.#live().run(input, runOptionsJson, signal);
      } finally {
        this.#host.answered();
      }
      if (this.#live().closing()) {
        answer(reply);
        const kept = this.#live().idle();
        this.#kept = kept.catch(() => {});
        keep(kept);
        await kept;
      }
      return reply;
    });
    return unwrap(await Promise.race([answered, turn]));
  }

  /**
   * A recorded call's pack rebuilt (../runtime.js whatIf); `hooks` ({ tokenizer, ranker })
   * are the page's functions for this call only, which the host calls for Python.
   */
  async whatIf(runId, optionsJson, hooks = {}) {
    return unwrap(
      await this.#locked(() => {
        this.#host.whatIf = hooks;
        try {
          return this.#live().what_if(runId, optionsJson);
        } finally {
          this.#host.whatIf = null;
        }
      }),
    );
  }

  /** Python's status, with the store's own (degraded, backend). */
  storageStatus() {
    return this.#withStore(unwrap(this.#live().storage_status()));
  }

  #withStore(status) {
    const store = this.#store?.status?.() ?? { degraded: false, backend: this.#store ? 'custom' : 'none' };
    return { ...status, ...store };
  }

  /**
   * What a worker's page mirrors, in one call to Python (the bridge's `mirror`): `known` is
   * `{ appended: { name: { length, lastId } | null }, content: [refs] | null, whole: [names] }`;
   * each list answers `{ from, items }`, content `{ live: [[ref, expiresAt]], added }`, each
   * whole view itself, storageStatus and diagnostics with what only this side knows.
   */
  mirror(known) {
    const views = unwrap(this.#live().mirror(JSON.stringify(known)));
    if (views.storageStatus) views.storageStatus = this.#withStore(views.storageStatus);
    if (views.diagnostics) views.diagnostics = this.#withBoot(views.diagnostics);
    return views;
  }

  /** A promise that rejects if the interpreter fails fatally (and otherwise never settles). */
  whenFatal() {
    return whenFatal(this.#pyodide);
  }

  /** Counts a test can check, and how the interpreter started (../boot/boot.js bootKind). */
  diagnostics() {
    return this.#withBoot(unwrap(this.#live().diagnostics()));
  }

  #withBoot(diagnostics) {
    return { ...diagnostics, boot: bootKind(this.#pyodide), bootMarks: bootMarks() };
  }

  /** Refuse further calls now; release the Python side once the last turn is kept. */
  async close() {
    const bridge = this.#bridge;
    if (!bridge) return;
    this.#bridge = undefined;
    await this.#kept;
    bridge.close();
    bridge.destroy();
  }

  // The declared operations not written out above: each the bridge's method, its JSON
  // answer unwrapped; a `queued` one under the queue and the session's lock.
  static {
    defineOperations(this.prototype, (name, { queued }) => {
      const method = bridgeName(name);
      return queued
        ? async function (...args) {
            return unwrap(await this.#locked(() => this.#live()[method](...args)));
          }
        : function (...args) {
            return unwrap(this.#live()[method](...args));
          };
    });
  }

  // The turn's work under the session's lock. The lock is released however the work ends,
  // including when the interpreter dies under it (its promise would never settle).
  #locked(fn) {
    const work = () => Promise.race([fn(), whenFatal(this.#pyodide)]);
    const lock = this.#store?.withSessionLock;
    const next = this.#tail.then(() => (lock ? lock(this.#sessionId, work) : work()));
    this.#tail = next.catch(() => {});
    return next;
  }

  #live() {
    if (!this.#bridge) throw new AgrunError('this runtime was closed', { code: 'closed' });
    return this.#bridge;
  }
}
