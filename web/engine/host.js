// The host side of the bridge: the page's JavaScript skills and event callback, seen by
// Python through one object (`host`). Everything crosses as JSON text; a skill sees plain,
// read-only objects and hands back plain data.
import { AgrunConfigError, AgrunError } from '../errors.js';
import { describe } from '../options.js';
import { MAX_OUTPUT_DEPTH, describeThrown, findNonPlain, readOnlyView } from '../plain.js';
import { unwrap } from '../wire.js';

/** Check the page's skills and describe them for Python (name, description, matcher). */
export function describeSkills(skills = []) {
  const names = new Set();
  return skills.map((skill, index) => {
    const where = `skills[${index}]`;
    if (!skill || typeof skill !== 'object') {
      throw new AgrunConfigError(`${where} must be an object { name, description, run }, got ${describe(skill)}`);
    }
    if (typeof skill.name !== 'string' || !skill.name.trim()) {
      throw new AgrunConfigError(`${where}.name must be a non-empty string, got ${describe(skill.name)}`);
    }
    if (typeof skill.run !== 'function') {
      throw new AgrunConfigError(`${where} (${skill.name}).run must be a function (input, context, helpers) => output`);
    }
    if (skill.applies !== undefined && typeof skill.applies !== 'function') {
      throw new AgrunConfigError(`${where} (${skill.name}).applies must be a function (input) => boolean`);
    }
    if (skill.description !== undefined && typeof skill.description !== 'string') {
      throw new AgrunConfigError(`${where} (${skill.name}).description must be a string`);
    }
    if (names.has(skill.name)) {
      throw new AgrunConfigError(`two skills are named '${skill.name}': give each skill a unique name`);
    }
    if (skill.parameters !== undefined) {
      const problem = findNonPlain(skill.parameters);
      if (problem || !skill.parameters || typeof skill.parameters !== 'object' || Array.isArray(skill.parameters)) {
        throw new AgrunConfigError(`${where} (${skill.name}).parameters must be a JSON Schema object${problem ? `: ${problem}` : ''}`);
      }
    }
    names.add(skill.name);
    return {
      name: skill.name,
      description: skill.description ?? '',
      hasApplies: Boolean(skill.applies),
      parameters: skill.parameters ?? null,
    };
  });
}

/**
 * The object Python calls into. Its methods take and return strings, numbers and booleans.
 * @param {object} page what the page passed (each optional but `skills`):
 *   skills (already checked by describeSkills), onEvent, countTokens, store (the session store
 *   Python persists through, web/storage/), provider ((request, { signal, onToken }) => reply),
 *   embed ((texts) => Promise<vectors>, recall's embedder),
 *   sensitivityFilter, and the context hooks ranker, compressors (by data type: { tool_output,
 *   artifact }, from the page's { toolOutput, artifact })
 *   and redactor
 */
export function createHost({ skills, onEvent, countTokens, store, provider, embed, sensitivityFilter, ranker, compressors, redactor }) {
  return {
    store,
    // The run in progress's own listeners ({ onToken, onEvent }): set by Runtime#run for the
    // length of one run (runs of a runtime never overlap).
    sink: null,
    // How many of the page's functions the runtime is inside now (skills and their matchers,
    // the provider, the embedder, the context hooks, sensitivityFilter): a call back into the
    // runtime from one of them would wait on the turn it is part of (Runtime#refuseReentry).
    inside: 0,

    countTokens(text) {
      return this.within(() => rethrown(() => countTokens(text)));
    },

    // The context hooks: Python checks what they answer (py/agrun/adapters/pyodide/hooks.py).
    rank(query, documentsJson) {
      return JSON.stringify(this.within(() => rethrown(() => ranker(query, JSON.parse(documentsJson)))) ?? null);
    },

    // rt.whatIf's own tokenizer and ranker ({ tokenizer, ranker }): set by the engine for
    // the length of one whatIf call.
    whatIf: null,

    whatIfCountTokens(text) {
      return this.within(() => rethrown(() => this.whatIf.tokenizer(text)));
    },

    whatIfRank(query, documentsJson) {
      return JSON.stringify(this.within(() => rethrown(() => this.whatIf.ranker(query, JSON.parse(documentsJson)))) ?? null);
    },

    compress(kind, text, limit, count) {
      const spans = this.within(() =>
        rethrown(() => compressors[kind](text, { limit, countTokens: (piece) => count(String(piece)) })),
      );
      return JSON.stringify(spans ?? null);
    },

    redact(text) {
      return this.within(() => rethrown(() => redactor(text)));
    },

    // The page's embedder: its vectors in the /embeddings reply's shape, which Python checks
    // (one list of numbers per text). A Float32Array is welcome; anything else fails the
    // call, and recall goes on without similarity.
    async embed(textsJson) {
      const leave = this.enter();
      let vectors;
      try {
        const pending = this.called(leave, () => embed(JSON.parse(textsJson)));
        vectors = await pending;
      } finally {
        leave();
      }
      return JSON.stringify({
        data: Array.from(vectors ?? [], (vector, index) => ({ index, embedding: Array.from(vector ?? []) })),
      });
    },

    applies(index, input) {
      return this.within(() => rethrown(() => skills[index].applies(input) === true));
    },

    /**
     * Start skill `index`. Returns { promise, abort }: the promise resolves to JSON
     * ({ ok, output } or { ok: false, problem }) and abort() tells the skill to stop.
     */
    callSkill(index, payloadJson, callHelper) {
      const controller = new AbortController();
      const leave = this.enter();
      const promise = runSkill(skills[index], payloadJson, callHelper, controller.signal).finally(leave);
      // Aborted (cancelled, timed out): the turn goes on without it, even if it never settles.
      return { promise, abort: (reason) => { leave(); controller.abort(reason); } };
    },

    /** Count the runtime as inside a page function until the returned `leave()` (once). */
    enter() {
      this.inside += 1;
      let left = false;
      return () => {
        if (!left) this.inside -= 1;
        left = true;
      };
    },

    // A page function that returns a Promise: during a run's answer (until run() resolves)
    // the runtime is inside it until it settles. After the answer (the memory extraction's
    // model call), the page may rightly call the runtime again, to be queued behind the
    // extraction; JavaScript cannot tell that call from one the function makes, so only what
    // the function does before its first await counts as inside then.
    called(leave, call) {
      try {
        return call();
      } finally {
        if (this.sink) this.untilAnswered.add(leave);
        else leave();
      }
    },

    // Calls counted until they settle or the run's answer is in, whichever comes first.
    untilAnswered: new Set(),

    /** The run's answer is in (engine.js): what is still running counts no more. */
    answered() {
      this.sink = null;
      for (const leave of this.untilAnswered) leave();
      this.untilAnswered.clear();
    },

    within(call) {
      const leave = this.enter();
      try {
        return call();
      } finally {
        leave();
      }
    },

    emit(eventJson) {
      if (!onEvent) return;
      try {
        onEvent(JSON.parse(eventJson));
      } catch (error) {
        console.warn('agrun: onEvent threw', error);
      }
    },

    // The page's own sensitivity check of an entry about to be remembered: its verdict
    // (true or a reason refuses). Throwing refuses too: Python fails closed.
    sensitivity(entryJson) {
      const verdict = this.within(() => sensitivityFilter(JSON.parse(entryJson)));
      return JSON.stringify({ verdict: verdict === true || typeof verdict === 'string' ? verdict : null });
    },

    // A piece of the model's reply, for the run's onToken.
    token(text) {
      try {
        this.sink?.onToken?.(text);
      } catch (error) {
        console.warn('agrun: onToken threw', error);
      }
    },

    // An event of the run in progress, for rt.stream().
    runEvent(eventJson) {
      this.sink?.onEvent?.(JSON.parse(eventJson));
    },

    /**
     * Call the page's provider. Returns { promise, abort }: the promise resolves to JSON
     * ({ ok, reply: { toolCalls, usage, finishReason } } or { ok: false, error }); every
     * piece of text goes through `onToken` first, what the provider returned beyond what it
     * streamed included, so Python assembles the text from tokens alone.
     */
    callProvider(requestJson, onToken) {
      const controller = new AbortController();
      const leave = this.enter();
      let streamed = '';
      let open = true;
      const emit = (delta) => {
        if (open && typeof delta === 'string' && delta) {
          streamed += delta;
          onToken(delta);
        }
      };
      const promise = (async () => {
        try {
          let answered;
          try {
            answered = await this.called(leave, () => provider(JSON.parse(requestJson), { signal: controller.signal, onToken: emit }));
          } catch (thrown) {
            open = false;
            return JSON.stringify({ ok: false, error: describeThrown(thrown) });
          }
          try {
            const reply = checkReply(answered);
            if (reply.text.startsWith(streamed)) emit(reply.text.slice(streamed.length));
            open = false; // Python lets go of onToken once the reply settles
            return JSON.stringify({ ok: true, reply: { toolCalls: reply.toolCalls, usage: reply.usage, finishReason: reply.finishReason } });
          } catch (thrown) {
            // It answered, but not with a reply: Python fails the turn provider_protocol_error.
            open = false;
            return JSON.stringify({ ok: false, error: describeThrown(thrown), protocol: true });
          }
        } finally {
          leave();
        }
      })();
      // Aborted (cancelled, past its deadline, or its reply too long): what the function
      // still streams goes nowhere, and the turn goes on without it.
      return { promise, abort: (reason) => { open = false; leave(); controller.abort(reason); } };
    },
  };
}

// A provider's reply, checked: { text, toolCalls: [{ id?, name, arguments }], usage?, finishReason? }.
export function checkReply(reply) {
  const where = "the page's provider returned";
  if (!reply || typeof reply !== 'object') throw new TypeError(`${where} ${describe(reply)}, not { text, toolCalls }`);
  const problem = findNonPlain(reply);
  if (problem) throw new TypeError(`${where} something that is not plain data: ${problem}`);
  const text = reply.text ?? '';
  if (typeof text !== 'string') throw new TypeError(`${where} a text that is not a string`);
  const toolCalls = reply.toolCalls ?? [];
  if (!Array.isArray(toolCalls)) throw new TypeError(`${where} toolCalls that is not an array`);
  const calls = toolCalls.map((call, index) => {
    if (!call || typeof call.name !== 'string' || !call.name) throw new TypeError(`${where} tool call ${index} without a name`);
    const args = call.arguments ?? '{}';
    return { id: typeof call.id === 'string' ? call.id : null, name: call.name, arguments: typeof args === 'string' ? args : JSON.stringify(args) };
  });
  const usage = reply.usage ?? null;
  const count = (n) => Number.isInteger(n) && n >= 0;
  if (usage !== null && !(count(usage.promptTokens ?? 0) && count(usage.completionTokens ?? 0))) {
    throw new TypeError(`${where} a usage that is not { promptTokens, completionTokens } integers of at least 0: ${JSON.stringify(usage)}`);
  }
  const finishReason = typeof reply.finishReason === 'string' ? reply.finishReason : null;
  return { text, toolCalls: calls, usage, finishReason };
}

// A page's callback may throw anything; what crosses into Python must be an Error.
function rethrown(call) {
  try {
    return call();
  } catch (thrown) {
    throw thrown instanceof Error ? thrown : new Error(describeThrown(thrown));
  }
}

// `calls` are Python callbacks, alive only while the skill runs; each takes and returns JSON.
// `callHelper(name, argumentJson)` is Python's one callback for this skill, alive only while
// it runs; it answers JSON ({ ok, result } or { ok: false, error }).
export async function runSkill(skill, payloadJson, callHelper, signal) {
  const payload = JSON.parse(payloadJson);
  let open = true;
  const checkOpen = (method) => {
    if (!open) {
      throw new AgrunError(`${method}() was called after skill '${skill.name}' returned; use the context and helpers only while your run is in progress`, { code: 'helpers_closed' });
    }
  };
  const call = (method, name, argument) => {
    checkOpen(method);
    const problem = findNonPlain(argument ?? null);
    if (problem) throw new AgrunConfigError(`${method}: the argument is not plain data: ${problem}`);
    // Python answers at once; a runtime in a worker answers some helpers with a Promise.
    const answer = callHelper(name, JSON.stringify(argument ?? null));
    return typeof answer === 'string' ? unwrap(answer) : answer.then(unwrap);
  };
  let memory;
  const context = {
    state: readOnlyView(payload.state, 'context.state'),
    // When a model called this skill as a tool: its checked arguments (else null).
    arguments: readOnlyView(payload.arguments ?? null, 'context.arguments'),
    memory: {
      readAll() {
        if (memory === undefined) {
          memory = readOnlyView(call('context.memory.readAll', 'readMemory'), 'memory entry');
        }
        return Array.from(memory);
      },
    },
    /**
     * A stored body by its content ref (read-only): a Promise (a runtime in a worker fetches
     * it across), rejected with code 'content_ref_not_found' for a ref that is not there.
     */
    async content(ref) {
      return readOnlyView(await call('context.content', 'readContent', ref), 'content entry');
    },
  };
  const helpers = {
    signal,
    appendMemory(entry) {
      checkOpen('helpers.appendMemory');
      const problem = findNonPlain(entry);
      if (problem) throw new AgrunConfigError(`appendMemory: the entry is not plain data: ${problem}`, { code: 'invalid_memory_entry' });
      return call('helpers.appendMemory', 'appendMemory', entry);
    },
    requestCycle(reason = '') {
      call('helpers.requestCycle', 'requestCycle', reason);
    },
    /** The sources this turn found and chose (ids, or { id, title }): the inquiry's. */
    noteSources(candidates, selected) {
      call('helpers.noteSources', 'noteSources', { candidates, selected: selected ?? null });
    },
    noteSearch(query) {
      call('helpers.noteSearch', 'noteSearch', query);
    },
    noteRead(source) {
      call('helpers.noteRead', 'noteRead', source);
    },
    /**
     * Whether to put a question to the person (clarification is a last resort): a Promise of
     * { ask, reason, value }; ask is false when the input is optional, a default or a direct
     * tool applies, or a confirmed sentence of the session holds that very input (`missing`).
     */
    async askClarification(question, { missing, optional, default: fallback, directTool, options } = {}) {
      return call('helpers.askClarification', 'askClarification', {
        question, missing, optional: optional ?? false, default: fallback ?? null,
        directTool: directTool ?? null, options: options ?? [],
      });
    },
  };
  Object.freeze(helpers);
  let output;
  try {
    output = await skill.run(payload.input, Object.freeze(context), helpers);
  } catch (thrown) {
    // Whatever was thrown (a string, 42, null, an Error with a broken getter) is described
    // here: a non-Error cannot cross into Python as an exception.
    return JSON.stringify({ ok: false, raised: describeThrown(thrown) });
  } finally {
    open = false; // Python destroys its callbacks when the skill ends: close the door first
  }
  const problem = output === undefined ? null : findNonPlain(output, '$', new Set(), MAX_OUTPUT_DEPTH);
  if (problem) return JSON.stringify({ ok: false, problem });
  return JSON.stringify({ ok: true, output: output ?? null });
}
