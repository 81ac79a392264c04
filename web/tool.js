// Tools the way the Vercel AI SDK writes them: tool({ name, description, inputSchema, execute }).
// What it makes is an ordinary skill ({ name, description, parameters, run }): Python checks a
// model's arguments against inputSchema before anything runs, so execute gets them parsed and
// checked; arguments that do not fit go back to the model, as for every skill.
import { AgrunConfigError } from './errors.js';
import { findNonPlain } from './plain.js';

// What providers accept as a tool's name (OpenAI's rule; the strictest of the usual ones).
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A tool a model can call, as a skill for createRuntime's `skills`.
 * @param {{ name: string, description?: string, inputSchema: object,
 *   execute: (args: object, context: object) => unknown, applies?: (input: string) => boolean }} definition
 */
export function tool(definition) {
  const { name, description = '', inputSchema, execute, applies } = definition ?? {};
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    throw new AgrunConfigError(`tool(): name must be 1-64 letters, digits, '_' or '-', got ${JSON.stringify(name)}`);
  }
  if (typeof description !== 'string') throw new AgrunConfigError(`tool '${name}': description must be a string`);
  if (typeof execute !== 'function') throw new AgrunConfigError(`tool '${name}': execute must be a function (args, context) => result`);
  const problem = findNonPlain(inputSchema ?? null);
  if (problem || !inputSchema || typeof inputSchema !== 'object' || Array.isArray(inputSchema) || inputSchema.type !== 'object') {
    throw new AgrunConfigError(`tool '${name}': inputSchema must be a JSON Schema of type 'object'${problem ? `: ${problem}` : ''}`);
  }
  const skill = {
    name,
    description,
    parameters: inputSchema,
    run(input, context, helpers) {
      const args = context.arguments ?? argumentsOf(name, input);
      return execute(args, { ...context, helpers, abortSignal: helpers.signal });
    },
  };
  if (applies !== undefined) skill.applies = applies;
  return Object.freeze(skill);
}

// Run as a skill (by name, or as the default) rather than called by a model: the input is
// the arguments' JSON.
function argumentsOf(name, input) {
  let args;
  try {
    args = JSON.parse(input);
  } catch {
    args = undefined;
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) {
    throw new AgrunConfigError(`tool '${name}' was run as a skill: its input must be a JSON object of its arguments`);
  }
  return Object.freeze(args);
}

/**
 * The test model as a page's provider: it calls every tool it is offered (or those in
 * `callTools`) with the smallest arguments their schema accepts, then answers with a JSON
 * object of the results by tool name (agrun.testing.TestModel, run in Python).
 * @param {{ callTools?: 'all' | string[], text?: string, extraction?: boolean }} [options]
 */
export function testModel(options = {}) {
  const { callTools = 'all', text, extraction = false, ...unknown } = options;
  if (Object.keys(unknown).length) {
    throw new AgrunConfigError(`testModel(): unknown option(s) ${Object.keys(unknown).join(', ')}`);
  }
  if (callTools !== 'all' && !(Array.isArray(callTools) && callTools.every((n) => typeof n === 'string'))) {
    throw new AgrunConfigError("testModel(): callTools must be 'all' or an array of tool names");
  }
  if (text !== undefined && typeof text !== 'string') throw new AgrunConfigError('testModel(): text must be a string');
  if (typeof extraction !== 'boolean') throw new AgrunConfigError('testModel(): extraction must be a boolean');
  return Object.freeze({ kind: 'test', callTools, ...(text === undefined ? {} : { text }), extraction });
}
