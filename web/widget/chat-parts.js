// A session's history, and a turn as it streams, as chat messages made of parts: the text,
// each tool call (pending, then its result or error), content the model read, a question
// back to the person. Pure functions of what the runtime reports; chat.js owns the state.

// The content tool the runtime offers the model (agrun.kernel's READ_CONTENT).
const READ_CONTENT = 'read_content';
// How the runtime words a tool call that failed, in the tool message the model reads.
const TOOL_ERROR = 'error: ';

/** A tool call's arguments as an object when they are JSON text, else as sent. */
function parseArguments(value) {
  if (typeof value !== 'string') return value ?? {};
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** The part a tool call starts as: pending, or the content it reads. */
export function callPart({ id, name, arguments: args }) {
  const parsed = parseArguments(args);
  if (name === READ_CONTENT) {
    return { type: 'retrieved', callId: id ?? null, ref: String(parsed?.ref ?? ''), state: 'pending' };
  }
  return { type: 'tool', callId: id ?? null, name, arguments: parsed, state: 'pending' };
}

/** `part` with the tool message's content as its result or error. */
function settled(part, content) {
  const failed = content.startsWith(TOOL_ERROR);
  return failed
    ? { ...part, state: 'error', error: content.slice(TOOL_ERROR.length) }
    : { ...part, state: 'result', result: content };
}

/** Append `text` to the parts: to the last text part, or as a new one after a tool call. */
export function withText(parts, text) {
  const last = parts.at(-1);
  if (last?.type === 'text') return [...parts.slice(0, -1), { ...last, text: last.text + text }];
  return [...parts, { type: 'text', text }];
}

/**
 * A stream event's change to an answer's parts (unchanged for events that are not about
 * its parts). The events name a call's tool but not its arguments: those come with the
 * turn's messages at its end (`turnParts`).
 */
export function withEvent(parts, event) {
  if (event.kind === 'ModelCallFinished') {
    return [...parts, ...event.toolCalls.map((name) => callPart({ id: null, name, arguments: {} }))];
  }
  if (event.kind === 'ToolCallFinished') {
    const at = parts.findIndex((p) => p.state === 'pending' && (p.callId === event.callId
      || (p.callId === null && (p.name ?? READ_CONTENT) === event.tool)));
    if (at < 0) return parts;
    const done = event.outcome === 'returned'
      ? { ...parts[at], callId: event.callId, state: 'result', result: event.detail }
      : { ...parts[at], callId: event.callId, state: 'error', error: event.detail || event.outcome };
    return parts.with(at, done);
  }
  if (event.kind === 'ContentRetrieved') {
    const at = parts.findIndex((p) => p.type === 'retrieved' && (p.ref === event.ref || !p.ref));
    const part = { type: 'retrieved', callId: null, ref: event.ref, found: event.found, state: 'pending' };
    return at < 0 ? [...parts, part] : parts.with(at, { ...parts[at], ref: event.ref, found: event.found });
  }
  return parts;
}

/**
 * The parts of one answer from its messages in history: assistant text and tool calls, and
 * the tool messages that answer them. `readContent(ref)` gives a long reply's whole body.
 */
export function turnParts(messages, readContent) {
  let parts = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      const text = message.contentRef ? wholeText(message, readContent) : message.content;
      if (text) parts = withText(parts, text);
      parts = [...parts, ...(message.toolCalls ?? []).map(callPart)];
    } else if (message.role === 'tool') {
      const at = parts.findIndex((p) => p.callId === message.toolCallId && p.state === 'pending');
      if (at >= 0) parts = parts.with(at, settled(parts[at], message.content));
    }
  }
  return parts.map((p) => (p.type === 'retrieved' && p.found === undefined ? { ...p, found: p.state === 'result' } : p));
}

// A reply's whole body; its stored head when the body is gone (evicted or expired).
function wholeText(message, readContent) {
  try {
    const { body } = readContent(message.contentRef);
    return typeof body === 'string' ? body : JSON.stringify(body, null, 2);
  } catch (error) {
    if (error?.code !== 'content_ref_not_found') throw error;
    return message.content;
  }
}

/** The question a turn left open for the person, as a part, or null. */
export function clarificationPart(inquiry) {
  const pending = inquiry?.pendingClarification;
  if (!pending) return null;
  return { type: 'clarification', question: pending.question, options: [...(pending.options ?? [])] };
}

const STATUS_OF_RUN = { failed: 'failed', cancelled: 'stopped' };

/**
 * The run a history message came from: the runtime names a turn's messages `<runId>:<role>`
 * (`run-…:assistant`, `run-…:a2`), and run ids hold no colon. Null for an id of another
 * shape (nothing to ask rt.why() about).
 */
export function runIdOf(messageId) {
  const at = messageId.indexOf(':');
  return at > 0 ? messageId.slice(0, at) : null;
}

/**
 * A session's history as chat messages: each person's message, then its answer (if any)
 * made of the assistant and tool messages that followed it (`stopped` when the person
 * stopped it: the runtime keeps its text, marked cancelled). The library's own frames
 * (nudges, corrections, notices) are left out.
 */
export function historyMessages(history, readContent) {
  const messages = [];
  let turn = [];
  const close = () => {
    const parts = turnParts(turn, readContent);
    // An answer the person stopped is kept marked cancelled (what had streamed, its text).
    const status = turn.some((m) => m.runStatus === 'cancelled') ? 'stopped' : 'done';
    if (parts.length) messages.push({ id: turn[0].id, role: 'assistant', parts, status, error: null, runId: runIdOf(turn[0].id) });
    turn = [];
  };
  for (const message of history) {
    if (message.role === 'user' && message.author === 'person') {
      close();
      const status = STATUS_OF_RUN[message.runStatus] ?? 'sent';
      const code = message.errorCode ?? 'agrun_error';
      const error = message.runStatus === 'failed' ? { code, message: `that turn failed (${code})` } : null;
      messages.push({ id: message.id, role: 'user', parts: [{ type: 'text', text: message.content }], status, error });
    } else if (message.role === 'assistant' || message.role === 'tool') {
      turn.push(message);
    }
  }
  close();
  return messages;
}

/** The text of a message's text parts, joined (what Copy copies). */
export function messageText(message) {
  return message.parts.filter((p) => p.type === 'text').map((p) => p.text).join('\n\n');
}
