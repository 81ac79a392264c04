// <agrun-chat>'s side panels (chats, memory, why, settings): which one is open, opening one with
// focus on its heading, closing it with focus back on what opened it (its button, Escape
// inside it too), drawing the open one again after a turn, and the why panel's read of one
// answer's run. What the chats, memory and settings panels hold is drawn by others.
import { headingOffset, levelHeadings } from './dom.js';
import { renderRunWhy, renderWhyPanel } from './why-panel.js';

export class Panels {
  #root;
  #element;
  #words;
  #runtime;
  #draw;
  #open = null;
  #why = null; // { runId, answer, button }: the answer whose Why opened the why panel; null for the toolbar's
  #whyRead = 0; // which rt.why() read the panel waits for (a later one wins)

  /**
   * @param {ShadowRoot} root the element's shadow root, holding the panels
   * @param {HTMLElement} element the <agrun-chat> (its heading level)
   * @param {{ words: object, runtime: () => object | null,
   *   draw: Record<'chats' | 'memory' | 'settings', (content: HTMLElement, runtime: object | null) => void> }} host
   *   the words.js table, the runtime in use, and how the chats, memory and settings panels are drawn
   */
  constructor(root, element, { words, runtime, draw }) {
    this.#root = root;
    this.#element = element;
    this.#words = words;
    this.#runtime = runtime;
    this.#draw = draw;
    this.#wire();
  }

  /** The open panel's name, or null. */
  get open() {
    return this.#open;
  }

  #wire() {
    this.#root.addEventListener('click', (event) => {
      const button = event.target.closest?.('button[data-panel], button[data-close]');
      if (button?.dataset.panel) {
        if (button.dataset.panel === 'why') this.#why = null; // the toolbar's: the last pack
        this.#toggle(button.dataset.panel);
      }
      if (button?.dataset.close) this.close(true);
    });
    this.#root.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || !this.#open) return;
      const inPanel = event.composedPath().some((node) => node.id === `${this.#open}-panel` || node.dataset?.panel);
      if (!inPanel) return;
      event.preventDefault();
      this.close(true);
    });
  }

  /** An answer's Why: the why panel, with that answer's run. */
  showWhy(runId, answer, button) {
    this.#why = { runId, answer, button };
    if (this.#open === 'why') {
      this.refresh(['why']);
      this.#root.getElementById('why-heading').focus();
    } else {
      this.#openPanel('why');
    }
  }

  #toggle(name) {
    if (this.#open === name) this.close(true);
    else this.#openPanel(name);
  }

  #openPanel(name) {
    this.close(false);
    this.#open = name;
    this.#root.getElementById(`${name}-panel`).hidden = false;
    this.#root.getElementById(`${name}-toggle`).setAttribute('aria-expanded', 'true');
    this.#root.getElementById('body').classList.add('panel-open');
    this.refresh([name]);
    this.#root.getElementById(`${name}-heading`).focus();
  }

  /** Close the open panel; with `returnFocus`, focus goes back to what opened it. */
  close(returnFocus) {
    const name = this.#open;
    if (!name) return;
    this.#open = null;
    this.#root.getElementById(`${name}-panel`).hidden = true;
    const toggle = this.#root.getElementById(`${name}-toggle`);
    toggle.setAttribute('aria-expanded', 'false');
    this.#root.getElementById('body').classList.remove('panel-open');
    // Back to what opened it: an answer's Why button if it is still there, else the toolbar.
    const opener = name === 'why' && this.#why?.button.isConnected ? this.#why.button : toggle;
    if (returnFocus) opener.focus();
  }

  /** Draw the open panel again, if it is one of `names`. */
  refresh(names) {
    const name = this.#open;
    if (!name || !names.includes(name)) return;
    const content = this.#root.getElementById(`${name}-content`);
    const focused = content.contains(this.#root.activeElement) ? focusKey(this.#root.activeElement) : null;
    this.#render(name, content);
    levelHeadings(content, headingOffset(this.#element));
    // Drawn again under the person's focus (a turn ended): put it back where it was.
    if (focused) content.querySelector(focused)?.focus();
  }

  #render(name, content) {
    const runtime = this.#runtime();
    if (name === 'settings' || name === 'chats') {
      this.#draw[name](content, runtime);
    } else if (!runtime) {
      content.replaceChildren(Object.assign(document.createElement('p'), { className: 'note', textContent: this.#words.starting }));
    } else if (name === 'why' && this.#why) {
      this.#readWhy(runtime, this.#why, content);
    } else if (name === 'why') {
      renderWhyPanel(content, runtime.lastPack(), this.#words);
    } else {
      this.#draw.memory(content, runtime);
    }
  }

  // rt.why() is a promise: the panel says it is reading, then shows the trace (or that it
  // is no longer kept), unless another read began meanwhile.
  async #readWhy(runtime, { runId, answer }, content) {
    const read = ++this.#whyRead;
    renderRunWhy(content, { reading: true }, this.#words);
    let state;
    try {
      state = { trace: await runtime.why(runId), answer };
    } catch (error) {
      state = { error };
    }
    if (read !== this.#whyRead || this.#open !== 'why' || this.#why?.runId !== runId) return;
    renderRunWhy(content, state, this.#words);
    levelHeadings(content, headingOffset(this.#element));
  }
}

// A selector that finds `element` again after its panel is drawn anew.
function focusKey(element) {
  if (element.id) return `#${CSS.escape(element.id)}`;
  if (element.dataset.index !== undefined) return `[part="${element.getAttribute('part')}"][data-index="${element.dataset.index}"]`;
  return null;
}
