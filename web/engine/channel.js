// Calls across a message port (a Worker seen from the page, or the worker's own scope), in
// both directions. One side calls `call(kind, payload)` and the other side's handler for that
// kind answers; a call can be cancelled (its AbortSignal reaches the handler), can hear
// progress from the handler while it runs (tokens, run events), and settles exactly once.
// Errors cross as plain data (./wire.js) and are rebuilt as agrun's typed errors.
import { AgrunError } from '../errors.js';
import { errorFromWire, errorToWire } from '../wire.js';

/**
 * @param {{ postMessage: Function, addEventListener: Function, removeEventListener: Function }} port
 * @param {Record<string, (payload: any, call: { signal: AbortSignal, progress: (data: any) => void }) => any>} handlers
 *   what this side answers; a handler may return a Promise, and may call `progress` until it settles
 * @param {{ onWaiting?: (count: number) => void }} [options] told how many of this side's calls
 *   wait for an answer, each time that number changes (the page watches its worker meanwhile)
 */
export function openChannel(port, handlers, { onWaiting } = {}) {
  let nextId = 1;
  const waiting = new Map(); // id -> { resolve, reject, onProgress } of calls this side made
  const serving = new Map(); // id -> AbortController of calls this side answers
  let closedBy = null;
  const waitingChanged = () => onWaiting?.(waiting.size);

  const post = (message, transfer = []) => {
    try {
      port.postMessage(message, transfer);
    } catch (error) {
      // A value that cannot be cloned fails the call that carried it, not the channel.
      if (message.t === 'done') port.postMessage({ t: 'done', id: message.id, ok: false, error: errorToWire(error) });
      else throw error;
    }
  };

  async function serve({ id, kind, payload }) {
    const controller = new AbortController();
    serving.set(id, controller);
    try {
      const handler = handlers[kind];
      if (!handler) throw new AgrunError(`nothing on the other side of the worker answers '${kind}'`, { code: 'internal_error' });
      const progress = (data) => {
        if (serving.has(id)) post({ t: 'progress', id, data });
      };
      const value = await handler(payload, { signal: controller.signal, progress });
      post({ t: 'done', id, ok: true, value }, transferablesOf(value));
    } catch (error) {
      post({ t: 'done', id, ok: false, error: errorToWire(error) });
    } finally {
      serving.delete(id);
    }
  }

  const listener = ({ data: message }) => {
    switch (message?.t) {
      case 'call':
        serve(message);
        break;
      case 'notify':
        handlers[message.kind]?.(message.payload);
        break;
      case 'cancel':
        serving.get(message.id)?.abort(errorFromWire(message.reason));
        break;
      case 'progress':
        waiting.get(message.id)?.onProgress?.(message.data);
        break;
      case 'done': {
        const call = waiting.get(message.id);
        if (!call) break;
        waiting.delete(message.id);
        waitingChanged();
        if (message.ok) call.resolve(message.value);
        else call.reject(errorFromWire(message.error));
        break;
      }
      default:
        break;
    }
  };
  port.addEventListener('message', listener);

  return {
    /**
     * Ask the other side. Resolves to its handler's answer, rejects with its error (rebuilt).
     * @param {{ signal?: AbortSignal, onProgress?: (data: any) => void, transfer?: Transferable[] }} [options]
     */
    call(kind, payload, { signal, onProgress, transfer = [] } = {}) {
      if (closedBy) return Promise.reject(closedBy);
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const cancel = () => post({ t: 'cancel', id, reason: errorToWire(signal.reason) });
        const settle = (fn) => (value) => {
          signal?.removeEventListener('abort', cancel);
          fn(value);
        };
        waiting.set(id, { resolve: settle(resolve), reject: settle(reject), onProgress });
        waitingChanged();
        try {
          post({ t: 'call', id, kind, payload }, transfer);
        } catch (error) {
          // A payload that cannot be cloned never left: nothing will answer it.
          waiting.delete(id);
          waitingChanged();
          throw error;
        }
        if (signal?.aborted) cancel();
        else signal?.addEventListener('abort', cancel, { once: true });
      });
    },
    /** Tell the other side something; no answer. */
    notify(kind, payload) {
      if (!closedBy) post({ t: 'notify', kind, payload });
    },
    /** Fail every call still waiting (the other side is gone) and refuse new ones. */
    close(error) {
      closedBy = error;
      port.removeEventListener('message', listener);
      for (const call of waiting.values()) call.reject(error);
      waiting.clear();
      waitingChanged();
      for (const controller of serving.values()) controller.abort(error);
    },
  };
}

/**
 * The pieces of text given in one task, sent as one: a burst of a reply's pieces made a
 * message (and an onToken call on the other side) for each, and where a line ended
 * depended on when the other thread looked (e2e/test_worker.py). `flush` sends what is
 * held at once (before an event or an answer that must come after it).
 * @param {(text: string) => void} send
 */
export function joinedPerTask(send) {
  let pending = '';
  const flush = () => {
    if (!pending) return;
    const text = pending;
    pending = '';
    send(text);
  };
  return {
    add(text) {
      if (!pending) queueMicrotask(flush);
      pending += text;
    },
    flush,
  };
}

// Large text crosses as a transferred buffer when the answer is one (an export file); other
// answers are copied by the structured clone.
function transferablesOf(value) {
  return value instanceof ArrayBuffer ? [value] : [];
}
