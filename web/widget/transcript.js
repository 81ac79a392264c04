// The conversation as a list: the person's words, agrun's answers (streamed in as they
// come) and turns that failed. Text only: nothing a person or a model says is parsed as HTML.
import { h } from './dom.js';

const PARTS = { user: 'message user-message', agent: 'message agent-message', error: 'message error-message' };

export class Transcript {
  #scroller;
  #list;

  /** @param {HTMLElement} scroller the scrolling region; @param {HTMLOListElement} list its list */
  constructor(scroller, list) {
    this.#scroller = scroller;
    this.#list = list;
  }

  /** Add one message at the end; `role` is 'user', 'agent' or 'error'. Returns its element. */
  add(role, text = '') {
    const pinned = this.#atBottom();
    const item = h('li', { class: role, part: PARTS[role] }, text);
    this.#list.append(item);
    if (pinned) this.scrollToEnd();
    return item;
  }

  /** Append a streamed piece of an answer to `item`. */
  stream(item, text) {
    const pinned = this.#atBottom();
    item.append(text);
    if (pinned) this.scrollToEnd();
  }

  /** Put `text` in `item` whole (the run's final answer replaces what streamed). */
  settle(item, text) {
    item.replaceChildren(text);
    item.normalize();
  }

  /**
   * Show a session's messages (rt.history()): the person's and the answers, in order. An
   * answer stored with a content ref is shown whole, read back with `readContent(ref)`
   * (history keeps only the head of a long reply); tool traffic is left out.
   */
  show(messages, readContent) {
    const items = [];
    for (const message of messages) {
      if (message.role === 'user') items.push(h('li', { class: 'user', part: PARTS.user }, message.content));
      // A turn that failed or was stopped kept only the person's words: say it got no answer.
      if (message.role === 'user' && message.runStatus) {
        const why = message.runStatus === 'cancelled' ? 'Stopped before the answer.' : 'Not answered: that turn failed.';
        items.push(h('li', { class: 'error unanswered', part: PARTS.error }, why));
      }
      if (message.role !== 'assistant') continue;
      const text = message.contentRef ? wholeText(message, readContent) : message.content;
      if (text) items.push(h('li', { class: 'agent', part: PARTS.agent }, text));
    }
    this.#list.replaceChildren(...items);
    this.scrollToEnd();
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

/** What a run's output looks like as text. */
export function outputText(output) {
  if (typeof output === 'string') return output;
  if (output === null || output === undefined) return '';
  return JSON.stringify(output, null, 2);
}
