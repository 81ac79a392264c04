// agrun's JavaScript face: createRuntime() boots Pyodide from the files beside this module,
// installs agrun's wheels and hands back a runtime whose results are plain JS objects.
import { bootPyodide, resolveIndexURL } from './boot.js';
import { AgrunBootError, AgrunConfigError, AgrunError, errorFromWire } from './errors.js';
import { checkOptions, describe } from './options.js';

export { AgrunBootError, AgrunConfigError, AgrunError };

const RUNTIME_OPTIONS = {
  indexURL: 'string',
  onProgress: 'function',
};

const RUN_OPTIONS = {
  signal: 'signal',
};

/**
 * Boot agrun and create a runtime.
 * @param {import('./agrun').RuntimeOptions} [options]
 * @returns {Promise<Runtime>}
 */
export async function createRuntime(options) {
  const opts = checkOptions('createRuntime', options, RUNTIME_OPTIONS);
  const progress = reporter(opts.onProgress);
  const pyodide = await bootPyodide(resolveIndexURL(opts.indexURL), progress);
  progress({ stage: 'runtime', loaded: 0, total: 1 });
  const module = pyodide.pyimport('agrun.adapters.pyodide.bridge');
  let bridge;
  try {
    bridge = module.create_bridge(JSON.stringify({}));
  } catch (cause) {
    throw new AgrunBootError(`agrun could not create its runtime: ${cause.message}`, { cause });
  } finally {
    module.destroy();
  }
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
   * @returns {Promise<import('./agrun').RunResult>}
   */
  async run(input, options) {
    checkOptions('run', options, RUN_OPTIONS);
    if (typeof input !== 'string') {
      throw new AgrunConfigError(`run() takes a string input, got ${describe(input)}: pass text`);
    }
    const reply = JSON.parse(await this.#live().run(input));
    if (!reply.ok) throw errorFromWire(reply.error);
    return reply.result;
  }

  /** Release the Python side of this runtime. Further calls throw. */
  close() {
    this.#bridge?.destroy();
    this.#bridge = undefined;
  }

  #live() {
    if (!this.#bridge) throw new AgrunError('this runtime was closed', { code: 'closed' });
    return this.#bridge;
  }
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
