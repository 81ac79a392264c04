// The conversation as a list, drawn from the chat controller's messages (chat.js): the
// person's words as text, agrun's answers as their parts (rendered markdown, tool calls and
// content read as collapsible sections, a question back), each with its actions. A message
// is drawn again only when the controller replaced it (or its place changed), so focus on
// an older message's button survives a turn.
import { h } from './dom.js';
import { renderMarkdown } from './markdown.js';
import { WORDS, errorSentence } from './words.js';

export class Transcript {
  #scroller;
  #list;
  #words;
  #drawn = new WeakMap(); // message -> { item, key }

  /**
   * @param {HTMLElement} scroller the scrolling region; @param {HTMLOListElement} list its list;
   * @param {object} words the words.js table the messages' notes and actions are in
   */
  constructor(scroller, list, words = WORDS) {
    this.#scroller = scroller;
    this.#list = list;
    this.#words = words;
  }

  /** Draw `messages` (a chat's), keeping the items of messages that did not change. */
  render(messages) {
    const pinned = this.#atBottom();
    const lastUser = messages.findLast((m) => m.role === 'user');
    const lastAnswer = messages.at(-1)?.role === 'assistant' ? messages.at(-1) : null;
    const items = messages.map((message, index) => {
      const next = messages[index + 1];
      const context = {
        words: this.#words,
        last: message === lastUser || message === lastAnswer,
        answered: message.role === 'user' && next?.role === 'assistant',
      };
      const key = `${context.last}|${context.answered}`;
      const drawn = this.#drawn.get(message);
      if (drawn?.key === key) return drawn.item;
      const item = message.role === 'user' ? userItem(message, context) : answerItem(message, context);
      item.dataset.id = message.id;
      this.#drawn.set(message, { item, key });
      return item;
    });
    // Move only what moved: an item taken out and put back loses the focus inside it.
    items.forEach((item, index) => {
      if (this.#list.children[index] !== item) this.#list.insertBefore(item, this.#list.children[index] ?? null);
    });
    while (this.#list.children.length > items.length) this.#list.lastElementChild.remove();
    if (pinned) this.scrollToEnd();
  }

  scrollToEnd() {
    this.#scroller.scrollTop = this.#scroller.scrollHeight;
  }

  // Follow new text only when the person has not scrolled up to read.
  #atBottom() {
    const s = this.#scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight < 40;
  }
}

const button = (action, label, extra = {}) => h('button', { type: 'button', class: 'action', 'data-action': action, ...extra }, label);

function actions(label, ...buttons) {
  const present = buttons.filter(Boolean);
  return present.length ? h('div', { class: 'actions', role: 'group', 'aria-label': label }, present) : null;
}

// What the runtime said went wrong, for a person who asks (a disclosure, closed).
function details(error, w) {
  if (!error?.message) return null;
  return h('details', { class: 'error-details', part: 'error-details' },
    h('summary', {}, w.details), h('p', {}, `${error.code}: ${error.message}`));
}

function userItem(message, { words: w, last, answered }) {
  const { status, error } = message;
  const text = message.parts.map((p) => p.text).join('');
  let note = null;
  if (status === 'not-sent') note = `${w.notSent} ${errorSentence(error, w)}`;
  // With part of an answer shown, it is not "no answer": the reason alone.
  else if (status === 'failed') note = answered ? errorSentence(error, w) : `${w.noAnswer} ${errorSentence(error, w)}`;
  else if (status === 'stopped' && !answered) note = w.stoppedBefore;
  const retryable = last && status !== 'sent' && error?.retryable !== false;
  const cannot = last && status !== 'sent' && error?.retryable === false ? w.cannotRetry : '';
  return h('li', { class: `user ${status}`, part: 'message user-message' },
    h('div', { class: 'said' }, text),
    note && h('p', { class: 'turn-note', part: 'turn-note' }, cannot ? `${note} ${cannot}` : note),
    details(error, w),
    actions(w.yourMessage, button('edit', w.edit), retryable && button('retry', w.retry)));
}

function answerItem(message, { words: w, last }) {
  const { status } = message;
  const settled = status !== 'streaming';
  let note = null;
  if (status === 'stopped') note = w.stopped;
  if (status === 'failed') note = w.failedAnswer;
  return h('li', { class: `agent ${status}`, part: 'message agent-message' },
    h('div', { class: 'parts' }, message.parts.map((part) => partElement(part, settled, w))),
    note && h('p', { class: 'turn-note', part: 'turn-note' }, note),
    settled && actions(w.answer, button('copy', w.copy),
      // Why this answer (its run's trace): only where its run is known.
      message.runId && button('why', w.answerWhy.button, { 'aria-label': w.answerWhy.buttonLabel }),
      last && button('regenerate', w.regenerate)));
}

function partElement(part, settled, w) {
  if (part.type === 'text') return textPart(part.text, w);
  if (part.type === 'clarification') {
    return h('div', { class: 'question', part: 'question' },
      h('p', {}, h('strong', {}, `${w.question}: `), part.question),
      part.options.length ? actions(part.question, part.options.map((option) => button('answer', option, { 'data-text': option }))) : null);
  }
  return callPart(part, settled, w);
}

function textPart(text, w) {
  const rendered = renderMarkdown(text);
  if (!rendered) return h('div', { class: 'text plain' }, text);
  for (const pre of rendered.querySelectorAll('pre')) {
    pre.replaceWith(h('div', { class: 'code' }, pre.cloneNode(true), button('copy-code', w.copyCode)));
  }
  return h('div', { class: 'text markdown' }, rendered);
}

// A tool call, or content the model read: a <details> whose summary says what and how it
// went, so a screen reader hears that and can open it for the arguments and the result.
function callPart(part, settled, w) {
  const state = part.state === 'pending' ? (settled ? w.toolFailed : w.toolRunning)
    : part.state === 'error' ? w.toolFailed : w.toolDone;
  const name = part.type === 'retrieved' ? w.retrieved : w.tool;
  const what = part.type === 'retrieved' ? part.ref : part.name;
  const missing = part.type === 'retrieved' && part.found === false ? ` (${w.retrievedMissing})` : '';
  const body = [];
  if (part.type === 'tool') body.push(h('p', { class: 'call-label' }, w.arguments), h('pre', {}, JSON.stringify(part.arguments, null, 2)));
  if (part.result !== undefined) body.push(h('p', { class: 'call-label' }, w.result), h('pre', {}, part.result));
  if (part.error !== undefined) body.push(h('p', { class: 'call-label' }, w.error), h('pre', {}, part.error));
  return h('details', { class: `call ${part.type} ${part.state}`, part: 'tool-call', 'aria-label': `${name} ${what}${missing}: ${state}` },
    h('summary', {}, `${name} `, h('code', {}, what), `${missing}: ${state}`),
    h('div', { class: 'call-body' }, body));
}
