// Errors as plain data, the one wire format agrun's JavaScript rebuilds typed errors from:
// `{ name, message, code?, pythonType?, details?, result? }`. An error crosses the worker's
// channel this way (errorToWire, errorFromWire); one from Python's bridge arrives in the
// bridge's own envelope (py/agrun/adapters/pyodide/_wire.py) and is read into it (unwrap).
import { AgrunBootError, AgrunConfigError, AgrunError } from './errors.js';
import { describeThrown } from './plain.js';

const AGRUN_ERRORS = { AgrunError, AgrunConfigError, AgrunBootError };
const CARRIED = ['code', 'pythonType', 'details', 'result'];

/** An error as plain data: what rebuilding it needs (its kind, code, message and result). */
export function errorToWire(error) {
  if (error instanceof Error) {
    const wire = { name: error.name, message: error.message };
    for (const key of CARRIED) {
      if (error[key] !== undefined) wire[key] = error[key];
    }
    return wire;
  }
  return { name: 'Error', message: describeThrown(error) };
}

/** The error `wire` describes, with agrun's class for agrun's errors. */
export function errorFromWire(wire) {
  if (!wire || typeof wire !== 'object') return new Error(String(wire));
  const ErrorType = AGRUN_ERRORS[wire.name] ?? (wire.code === undefined ? Error : AgrunError);
  const error = new ErrorType(wire.message);
  error.name = wire.name;
  for (const key of CARRIED) {
    if (wire[key] !== undefined) error[key] = wire[key];
  }
  return error;
}

/**
 * The error Python's bridge sent (`{ type, code, message, callersFault }`): the caller's
 * fault (bad options or input) is an AgrunConfigError, anything else an AgrunError.
 */
export function errorFromPython({ type, callersFault, ...rest }) {
  return errorFromWire({ ...rest, name: callersFault ? 'AgrunConfigError' : 'AgrunError', pythonType: type });
}

/** The result inside a JSON reply from Python, or the typed error it carries. */
export function unwrap(replyJson) {
  const reply = JSON.parse(replyJson);
  if (!reply.ok) throw errorFromPython(reply.error);
  return reply.result;
}
