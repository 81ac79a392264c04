// <agrun-chat>: a chat with agrun in one element (README.md beside this file documents its
// attributes, properties, events, CSS custom properties and parts).
//
// This module is kept small on purpose: it paints the shell and its progress bar as soon as
// the element is parsed, and only then do the runtime (agrun.js, Pyodide) and the widget's
// behaviour (controller.js) load, side by side.
import { headingOffset, levelHeadings } from './dom.js';
import { STYLES } from './styles.js';
import { shell } from './template.js';
import { directionFor, wordsFor } from './words.js';

const AGRUN_URL = new URL('../agrun.js', import.meta.url).href;
const CONFIG_ATTRIBUTES = ['session-id', 'storage', 'db-name', 'global-memory', 'provider-kind', 'base-url', 'model', 'model-url'];

// Nothing else loads before the frame that paints the shell, so no script holds it up.
const firstFrame = new Promise((resolve) => requestAnimationFrame(resolve));
let controllerModule;
const loadController = () => (controllerModule ??= firstFrame.then(() => import('./controller.js')));

export class AgrunChatElement extends HTMLElement {
  static observedAttributes = [...CONFIG_ATTRIBUTES, 'heading', 'heading-level', 'dir'];

  #root;
  #controller = null;
  #starting = null;
  #provider = null;
  #options = {};
  #lang = null;

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#paint();
  }

  /** The language the widget speaks: its `lang`, else its page's (inherited), else 'en'. */
  get language() {
    return this.closest('[lang]')?.getAttribute('lang') || document.documentElement.lang || 'en';
  }

  // The shell in the words of the element's language. A parsed element has its attributes
  // here; one made by createElement gets them before it is connected, so it is painted again
  // then (only until the behaviour has started: a later change of `lang` is not followed).
  #paint() {
    const lang = this.language;
    if (lang === this.#lang) return;
    this.#lang = lang;
    const painted = shell(wordsFor(lang), this.#direction());
    const sheet = sharedSheet();
    if (sheet) {
      this.#root.adoptedStyleSheets = [sheet];
      this.#root.innerHTML = painted;
    } else {
      this.#root.innerHTML = `<style>${STYLES}</style>${painted}`;
    }
  }

  // Right to left for a language written so, unless the element's own `dir` says otherwise;
  // no `dir` of its own for the others, so an English widget follows its page's direction.
  #direction() {
    const own = this.getAttribute('dir');
    if (own) return own;
    return directionFor(this.#lang ?? this.language) === 'rtl' ? 'rtl' : null;
  }

  /** The page's own provider function (request, { signal, onToken }) => reply, or null. */
  get provider() {
    return this.#provider;
  }

  set provider(fn) {
    if (fn !== null && fn !== undefined && typeof fn !== 'function') {
      throw new TypeError('agrun-chat: provider must be a function (request, { signal, onToken }) => reply, or null');
    }
    this.#provider = fn ?? null;
    this.#controller?.setProvider(this.#provider);
  }

  /** More createRuntime options (skills, systemPrompt, contextWindow, ...); the widget's own win. */
  get options() {
    return this.#options;
  }

  set options(value) {
    this.#options = { ...(value ?? {}) };
    this.#controller?.setOptions(this.#options);
  }

  /** The runtime in use, or null while one is being made. */
  get runtime() {
    return this.#controller?.runtime ?? null;
  }

  /** Resolves with the runtime once it is ready (again after a change of settings). */
  get ready() {
    return this.#start().then((controller) => controller.ready);
  }

  connectedCallback() {
    for (const name of ['provider', 'options']) this.#upgradeProperty(name);
    if (!this.#controller) this.#paint();
    this.#heading();
    markFirstPaint();
    this.#start().then((controller) => this.isConnected && controller.connect(), () => {});
    // Offline-first unless offline="off" (offline-default.js), off the first paint's path.
    firstFrame.then(() => import('./offline-default.js')).then(({ offerOffline }) => offerOffline(this), () => {});
  }

  disconnectedCallback() {
    this.#controller?.disconnect();
  }

  attributeChangedCallback(name, previous, value) {
    if (previous === value) return;
    if (name === 'heading' || name === 'heading-level') this.#heading();
    else if (name === 'dir') this.#frameDirection();
    else this.#controller?.attributeChanged(name);
  }

  #start() {
    this.#starting ??= loadController().then(
      ({ ChatController }) => {
        this.#controller = new ChatController(this, this.#root, {
          provider: this.#provider, options: this.#options, words: wordsFor(this.#lang),
        });
        return this.#controller;
      },
      (error) => {
        this.#root.getElementById('status').textContent = wordsFor(this.#lang).couldNotStart(error.message);
        throw error;
      },
    );
    return this.#starting;
  }

  // A property set before the element was defined sits on the instance: take it through
  // the setter.
  #upgradeProperty(name) {
    if (!Object.hasOwn(this, name)) return;
    const value = this[name];
    delete this[name];
    this[name] = value;
  }

  #frameDirection() {
    const frame = this.#root.querySelector('.frame');
    const dir = this.#direction();
    if (dir) frame.setAttribute('dir', dir);
    else frame.removeAttribute('dir');
  }

  #heading() {
    this.#root.getElementById('title').textContent = this.getAttribute('heading') || 'agrun';
    levelHeadings(this.#root, headingOffset(this));
  }
}

// The widget's styles as one constructed sheet that every widget's shadow root adopts: a
// page's Content Security Policy governs <style> elements (without 'unsafe-inline' a <style>
// in the shadow root is refused and the widget is drawn unstyled), not a sheet made in
// script; and it is parsed once for all widgets. A <style> where a browser cannot adopt.
let sheet;
function sharedSheet() {
  if (sheet === undefined) {
    sheet = null;
    try {
      if ('adoptedStyleSheets' in ShadowRoot.prototype) {
        sheet = new CSSStyleSheet();
        sheet.replaceSync(STYLES);
      }
    } catch {
      sheet = null;
    }
  }
  return sheet;
}

// For bench/widget_paint.py: when the first shell was built, and a task after the frame that
// drew it.
function markFirstPaint() {
  if (performance.getEntriesByName('agrun-chat:shell').length) return;
  performance.mark('agrun-chat:shell');
  requestAnimationFrame(() => setTimeout(() => performance.mark('agrun-chat:progress-painted')));
}

if (!customElements.get('agrun-chat')) customElements.define('agrun-chat', AgrunChatElement);

// The runtime and the behaviour load side by side, from the frame that paints the shell; a
// failure is reported by the element that waits for them.
firstFrame.then(() => import(AGRUN_URL)).catch(() => {});
loadController().catch(() => {});
