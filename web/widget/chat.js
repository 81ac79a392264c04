// createChat(rt): a conversation with a runtime as plain data a view can draw, like the Vercel
// AI SDK's useChat but bound to no framework. The messages mirror the session's history
// (append-only: editing or regenerating sends a new turn at the end), plus what only this
// page saw: an answer as it streams, a stopped answer's tool calls (history keeps its text),
// a message the runtime never took. Every change replaces `messages` with a new array and tells the
// subscribers; <agrun-chat> is one such view.
import { AgrunError } from '../errors.js';
import { describeChatError } from './chat-errors.js';
import { clarificationPart, historyMessages, messageText, turnParts, withEvent, withText } from './chat-parts.js';

export { messageText };

/**
 * @param {import('../agrun').Runtime} runtime
 * @returns {import('../agrun').Chat}
 */
export function createChat(runtime) {
  if (typeof runtime?.stream !== 'function' || typeof runtime?.history !== 'function') {
    throw new TypeError('createChat(runtime): pass a runtime made by createRuntime()');
  }
  return new Chat(runtime);
}

let localIds = 0;

class Chat {
  #runtime;
  #messages = [];
  #status = 'ready';
  #error = null;
  #lastResult = null;
  #turn = null; // the running turn's AbortController
  #listeners = new Set();

  constructor(runtime) {
    this.#runtime = runtime;
    this.#messages = this.#fromHistory();
  }

  /** @returns {import('../agrun').UIMessage[]} */
  get messages() {
    return this.#messages;
  }

  /** 'ready', 'submitted' (sent, nothing back yet), 'streaming', or 'error' (the last turn failed). */
  get status() {
    return this.#status;
  }

  get error() {
    return this.#error;
  }

  /** The last turn's RunResult (a stopped turn's too); null before one, or when the runtime refused it. */
  get lastResult() {
    return this.#lastResult;
  }

  get runtime() {
    return this.#runtime;
  }

  /** Call `listener(chat)` after every change; returns the function that stops it. */
  subscribe(listener) {
    if (typeof listener !== 'function') throw new TypeError('chat.subscribe(listener): listener must be a function');
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Read the session's history again (after another tab or an import changed it). */
  reload() {
    this.#refuseWhileRunning('reload');
    this.#messages = this.#fromHistory();
    this.#set({ status: 'ready', error: null });
  }

  /** Send the person's words; resolves when the turn has ended, however it ended. */
  send(text) {
    if (typeof text !== 'string' || !text.trim()) {
      return Promise.reject(new TypeError('chat.send(text): text must be a non-empty string'));
    }
    try {
      this.#refuseWhileRunning('send');
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#run(text);
  }

  /** Stop the running turn: what was answered so far stays, marked 'stopped'. */
  stop() {
    this.#turn?.abort(new DOMException('stopped by the person', 'AbortError'));
  }

  /** Ask the last question again; the new answer comes as a new turn at the end. */
  regenerate() {
    const last = this.#messages.findLast((m) => m.role === 'user');
    if (!last) return Promise.reject(new AgrunError('chat.regenerate(): nothing has been asked yet', { code: 'chat_empty' }));
    return this.send(messageText(last));
  }

  /** Send `text` in place of message `id`: a new turn at the end; the turns after it stay. */
  edit(id, text) {
    this.#find(id, 'edit', 'user');
    return this.send(text);
  }

  /** Send a failed, stopped or never-sent message again (the last one, by default). */
  retry(id) {
    const message = id === undefined
      ? this.#messages.findLast((m) => m.role === 'user')
      : this.#find(id, 'retry', 'user');
    if (!message || message.status === 'sent') {
      return Promise.reject(new AgrunError('chat.retry(): that message was answered; regenerate() asks again', { code: 'chat_nothing_to_retry' }));
    }
    if (message.status === 'not-sent' && !this.#turn) {
      // Never in the session: the new turn takes its place rather than standing beside it.
      this.#messages = this.#messages.filter((m) => m.id !== message.id && m.replyTo !== message.id);
    }
    return this.send(messageText(message));
  }

  #find(id, method, role) {
    const message = this.#messages.find((m) => m.id === id && m.role === role);
    if (!message) throw new AgrunError(`chat.${method}(${JSON.stringify(id)}): no ${role} message has that id`, { code: 'chat_unknown_message' });
    return message;
  }

  #refuseWhileRunning(method) {
    if (this.#turn) {
      throw new AgrunError(`chat.${method}(): a turn is running; stop() it or wait for it to end`, { code: 'chat_busy' });
    }
  }

  #fromHistory() {
    const runtime = this.#runtime;
    const messages = historyMessages(runtime.history(), (ref) => runtime.content(ref));
    const asked = clarificationPart(runtime.inquiry());
    const last = messages.at(-1);
    if (asked && last?.role === 'assistant') last.parts = [...last.parts, asked];
    for (const message of messages) {
      if (message.error) message.error = describeChatError(message.error);
    }
    return messages;
  }

  async #run(text) {
    const turn = new AbortController();
    this.#turn = turn;
    const said = { id: `local:${++localIds}`, role: 'user', parts: [{ type: 'text', text }], status: 'sent', error: null };
    let answer = { id: `local:${++localIds}`, role: 'assistant', parts: [], status: 'streaming', error: null, replyTo: said.id, runId: null };
    this.#messages = [...this.#messages, said];
    this.#set({ status: 'submitted', error: null });
    const update = (change) => {
      const parts = change(answer.parts);
      if (parts === answer.parts) return;
      const first = !answer.parts.length;
      answer = { ...answer, parts };
      this.#messages = first ? [...this.#messages, answer] : this.#messages.map((m) => (m.id === answer.id ? answer : m));
      this.#set({ status: 'streaming' });
    };
    try {
      for await (const item of this.#runtime.stream(text, { signal: turn.signal })) {
        if (item.type === 'token') update((parts) => withText(parts, item.text));
        else if (item.type === 'event') update((parts) => withEvent(parts, item.event));
        else this.#finish(item.result, said, answer);
      }
    } catch (error) {
      this.#fail(error, said, answer);
    } finally {
      this.#turn = null;
      this.#set({});
    }
  }

  // The turn ended with a result: its messages replace what streamed (they carry the tool
  // calls' arguments and the history's ids).
  #finish(result, said, answer) {
    const runtime = this.#runtime;
    this.#lastResult = result;
    const [person, ...reply] = result.messages;
    const sent = { ...said, id: person?.id ?? said.id };
    if (result.state.status === 'succeeded') {
      const parts = turnParts(reply, (ref) => runtime.content(ref));
      const asked = clarificationPart(runtime.inquiry());
      const done = {
        ...answer, id: reply[0]?.id ?? answer.id, parts: asked ? [...parts, asked] : parts, status: 'done', runId: result.state.runId,
      };
      this.#replace(said, answer, sent, done.parts.length ? done : null);
      this.#set({ status: 'ready', error: null });
      return;
    }
    const error = describeChatError(result.error ?? result.state.error);
    const kept = answer.parts.length ? { ...answer, status: 'failed', error, runId: result.state.runId } : null;
    this.#replace(said, answer, { ...sent, status: 'failed', error }, kept);
    this.#set({ status: 'error', error });
  }

  #fail(error, said, answer) {
    if (error?.name === 'AbortError') {
      // The runtime kept the person's words and the answer's text so far, both marked
      // cancelled; the parts stay as they streamed (tool calls too) until a reload.
      this.#lastResult = error.result ?? null;
      const [person, reply] = error.result?.messages ?? [];
      const kept = answer.parts.length
        ? { ...answer, id: reply?.id ?? answer.id, status: 'stopped', runId: error.result?.state?.runId ?? null }
        : null;
      this.#replace(said, answer, { ...said, id: person?.id ?? said.id, status: 'stopped' }, kept);
      this.#set({ status: 'ready', error: null });
      return;
    }
    // Rejected before the turn began (closed runtime, bad input, a call from inside a skill):
    // the session never took the message.
    this.#lastResult = null;
    const described = describeChatError(error);
    this.#replace(said, answer, { ...said, status: 'not-sent', error: described }, null);
    this.#set({ status: 'error', error: described });
  }

  #replace(said, answer, person, reply) {
    const out = [];
    for (const message of this.#messages) {
      if (message.id === said.id) out.push(person);
      else if (message.id !== answer.id) out.push(message);
    }
    if (reply) out.splice(out.indexOf(person) + 1, 0, { ...reply, replyTo: person.id });
    this.#messages = out;
  }

  #set({ status, error }) {
    if (status !== undefined) this.#status = status;
    if (error !== undefined) this.#error = error;
    for (const listener of this.#listeners) {
      try {
        listener(this);
      } catch (problem) {
        console.error('agrun chat: a subscriber threw', problem);
      }
    }
  }
}
