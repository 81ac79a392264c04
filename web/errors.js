// The errors agrun's JavaScript face throws. Each carries a stable `code` a page can branch on.

export class AgrunError extends Error {
  /**
   * @param {string} message what went wrong and what to do instead
   * @param {{ code?: string, cause?: unknown, details?: object }} [options]
   */
  constructor(message, { code = 'agrun_error', cause, details } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'AgrunError';
    this.code = code;
    if (details !== undefined) this.details = details;
  }
}

/** The page passed an option or value agrun cannot use. */
export class AgrunConfigError extends AgrunError {
  constructor(message, options = {}) {
    super(message, { code: 'config_error', ...options });
    this.name = 'AgrunConfigError';
  }
}

/** A vendored file could not be loaded, or Pyodide could not start. */
export class AgrunBootError extends AgrunError {
  constructor(message, options = {}) {
    super(message, { code: 'boot_failed', ...options });
    this.name = 'AgrunBootError';
  }
}

/** A run that did not succeed, thrown by `result.throwIfFailed()`; `code` is the run's error code. */
export class RunFailedError extends AgrunError {
  constructor(result) {
    const code = result.error?.code ?? 'agrun_error';
    super(`the run ${result.state.status} (${code}): ${result.error?.message ?? 'no error was recorded'}`, { code });
    this.name = 'RunFailedError';
    this.result = result;
  }
}

/** Give a run's result its `throwIfFailed()`, not enumerable, so the result stays plain JSON. */
export function withThrowIfFailed(result) {
  Object.defineProperty(result, 'throwIfFailed', {
    value() {
      if (result.state.status !== 'succeeded') throw new RunFailedError(result);
      return result;
    },
  });
  return result;
}
