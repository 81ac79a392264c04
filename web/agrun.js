// agrun's JavaScript face: createRuntime() boots Pyodide from the files beside this module,
// installs agrun's wheels and hands back a runtime whose results are plain JS objects.
import { bootPyodide, resolveIndexURL } from './boot.js';
import { AgrunBootError, AgrunConfigError, AgrunError, errorFromWire, unwrap } from './errors.js';
import { createHost, describeSkills } from './host.js';
import { checkOptions, describe } from './options.js';
import { findNonPlain } from './plain.js';

export { AgrunBootError, AgrunConfigError, AgrunError };

const RUNTIME_OPTIONS = {
  indexURL: 'string',
  onProgress: 'function',
  onEvent: 'function',
  skills: 'array',
  defaultSkill: 'string',
  maxCycles: 'number',
  skillTimeoutMs: 'number',
  countTokens: 'function',
};

const RUN_OPTIONS = {
  signal: 'signal',
  skill: 'string',
};

/**
 * Boot agrun and create a runtime.
 * @param {import('./agrun').RuntimeOptions} [options]
 * @returns {Promise<Runtime>}
 */
export async function createRuntime(options) {
  const opts = checkOptions('createRuntime', options, RUNTIME_OPTIONS);
  const skills = opts.skills ?? [];
  const config = {
    skills: describeSkills(skills),
    events: Boolean(opts.onEvent),
    countTokens: Boolean(opts.countTokens),
    ...pick(opts, ['defaultSkill', 'maxCycles', 'skillTimeoutMs']),
  };
  const progress = reporter(opts.onProgress);
  const pyodide = await bootPyodide(resolveIndexURL(opts.indexURL), progress);
  progress({ stage: 'runtime', loaded: 0, total: 1 });
  const module = pyodide.pyimport('agrun.adapters.pyodide.bridge');
  let bridge;
  try {
    bridge = module.create_bridge(JSON.stringify(config), createHost(skills.slice(), opts.onEvent, opts.countTokens));
  } catch (cause) {
    throw new AgrunBootError(`agrun could not create its runtime: ${cause.message}`, { cause });
  } finally {
    module.destroy();
  }
  if (typeof bridge === 'string') throw errorFromWire(JSON.parse(bridge).error);
  progress({ stage: 'runtime', loaded: 1, total: 1 });
  return new Runtime(bridge);
}

/** A booted runtime. Create it with `createRuntime`. */
class Runtime {
  #bridge;

  constructor(bridge) {
    this.#bridge = bridge;
  }

  /**
   * Run one input through the runtime.
   * @param {string} input what the person said
   * @param {import('./agrun').RunOptions} [options]
   * @returns {Promise<import('./agrun').RunResult>} a failed run resolves too (status
   *   'failed', with `error`); an aborted run rejects with an 'AbortError' carrying `result`.
   */
  async run(input, options) {
    const opts = checkOptions('run', options, RUN_OPTIONS);
    if (typeof input !== 'string') {
      throw new AgrunConfigError(`run() takes a string input, got ${describe(input)}: pass text`);
    }
    const runOptions = JSON.stringify(pick(opts, ['skill']));
    const result = unwrap(await this.#live().run(input, runOptions, opts.signal));
    if (result.state.status === 'cancelled') {
      const error = new AgrunError(`the run was cancelled: ${result.error?.message ?? 'aborted'}`, { code: 'cancelled' });
      error.name = 'AbortError';
      error.result = result;
      throw error;
    }
    return result;
  }

  /**
   * Build a token-budgeted context pack (docs/context.md has the request's shape).
   * @param {import('./agrun').ContextRequest} request camelCase, plain data
   * @returns {import('./agrun').ContextPack} layers L0-L4, budgetUsed, budgetLimit, ...
   */
  buildContext(request) {
    const problem = findNonPlain(request);
    if (problem) throw new AgrunConfigError(`buildContext: the request is not plain data: ${problem}`);
    return unwrap(this.#live().build_context(JSON.stringify(request)));
  }

  /** What the runtime keeps between runs: `{ lastRun }`, a small summary. */
  state() {
    return unwrap(this.#live().state());
  }

  /** Every memory entry the runtime retained, oldest first. */
  memory() {
    return unwrap(this.#live().memory());
  }

  /** Counts for tests and debugging: `{ liveProxies }` (helper proxies alive; 0 between runs). */
  diagnostics() {
    return unwrap(this.#live().diagnostics());
  }

  /** Release the Python side of this runtime. Further calls throw. */
  close() {
    if (!this.#bridge) return;
    this.#bridge.close();
    this.#bridge.destroy();
    this.#bridge = undefined;
  }

  #live() {
    if (!this.#bridge) throw new AgrunError('this runtime was closed', { code: 'closed' });
    return this.#bridge;
  }
}

function pick(object, names) {
  return Object.fromEntries(names.filter((n) => object[n] !== undefined).map((n) => [n, object[n]]));
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
