// What <agrun-chat> does once its shell is painted: makes the runtime (again when a setting
// changes), runs turns and the messages' actions, and keeps the settings and memory the
// panels show. The rest is in parts of their own: panels.js (which panel is open, focus, the
// why panel's read), status-strip.js (progress bar, status line, storage banner),
// message-actions.js (edit, copy), empty-chat.js, transcript.js. agrun-chat.js loads it
// beside agrun.js, so the element's first paint waits for neither.
import { createChat, messageText } from './chat.js';
import { Conversations } from './conversations.js';
import { emptyChat } from './empty-chat.js';
import { loadMarkdown } from './markdown.js';
import { focusAfterForget, renderMemoryPanel } from './memory-panel.js';
import { MessageEditing, copyText } from './message-actions.js';
import { Panels } from './panels.js';
import { checkServer, describeProvider, initialSettings, resolveProvider } from './provider.js';
import { RuntimeFactory, globalMemoryChoice, loadAgrun, modelChoice, readConfig } from './session.js';
import { renderSettingsPanel } from './settings-panel.js';
import { StatusStrip } from './status-strip.js';
import { Transcript } from './transcript.js';
import { WORDS } from './words.js';

const PROVIDER_ATTRIBUTES = ['provider-kind', 'base-url', 'model', 'model-url'];

export class ChatController {
  #element;
  #root;
  #el;
  #transcript;
  #factory;
  #runtime = null;
  #pageProvider = null;
  #options = {};
  #settings = null;
  #apiKey = ''; // a hosted API's key: this field only, never an attribute or any storage
  #inPage = new Map();
  #globalMemory = null;
  #work = Promise.resolve(); // boots, turns and forgets, one after the other
  #rebuildQueued = false;
  #chat = null;
  #unsubscribe = () => {};
  #busy = false; // a turn is running (from send until the chat is ready again)
  #editing;
  #strip;
  #panels;
  #drawFrame = 0;
  #ready;
  #settle = null; // while #ready is pending
  #isReady = false;
  #connected = false;
  #focusedOnce = false;
  #words;
  #conversations;

  /**
   * @param {HTMLElement} element the <agrun-chat> (its attributes are read at each build)
   * @param {ShadowRoot} root its shadow root, holding the shell
   * @param {{ provider: Function | null, options: object, words?: object }} initial what the
   *   page set before, and the words.js table the widget speaks
   */
  constructor(element, root, { provider, options, words = WORDS }) {
    this.#element = element;
    this.#words = words;
    this.#root = root;
    const byId = (id) => root.getElementById(id);
    this.#el = Object.fromEntries(
      ['status', 'boot', 'bar', 'banner', 'announce', 'body', 'chat', 'input', 'send', 'stop']
        .map((id) => [id, byId(id)]),
    );
    this.#transcript = new Transcript(byId('transcript'), byId('messages'), words);
    this.#factory = new RuntimeFactory({
      onStorageDegraded: (event) => this.#storageDegraded(event),
      onStorageRestored: () => this.#storageRestored(),
      onDataLoss: (event) => this.#dataLoss(event),
    });
    this.#pageProvider = provider;
    this.#options = { ...options };
    this.#settings = this.#initialSettings();
    this.#strip = new StatusStrip(this.#el, words);
    this.#editing = new MessageEditing(root, this.#el.input, words, (text) => this.#announce(text));
    this.#panels = new Panels(root, element, {
      words,
      runtime: () => this.#runtime,
      draw: {
        chats: (content) => this.#conversations.render(content),
        settings: (content) => renderSettingsPanel(content, this.#settings, {
          words: this.#words, pageProvider: Boolean(this.#pageProvider), keyHeld: Boolean(this.#apiKey),
          apply: (settings, apiKey) => this.#applySettings(settings, apiKey),
        }),
        memory: (content, runtime) => renderMemoryPanel(content, {
          sessionMemory: runtime.sessionMemory(), globalMemory: runtime.globalMemory(), enabled: this.#globalMemory,
        }, {
          words: this.#words,
          forget: (entry, index) => this.#forget(entry, index),
          toggle: () => this.#toggleGlobalMemory(),
        }),
      },
    });
    this.#conversations = new Conversations({
      element, words,
      runtime: () => this.#runtime,
      config: () => readConfig(element),
      enqueue: (work) => this.#enqueue(work),
      rebuild: () => this.#rebuild(),
      rebind: () => this.#runtime && this.#bindChat(this.#runtime),
      announce: (text) => this.#announce(text),
      isOpen: () => this.#panels.open === 'chats',
      content: () => root.getElementById('chats-content'),
    });
    this.#unready();
    this.#wire();
    // highlight.js's themes for code in answers, after the first paint (nothing waits for them).
    for (const [scheme, file] of [['light', 'hljs-light.css'], ['dark', 'hljs-dark.css']]) {
      const href = new URL(`./vendor/${file}`, import.meta.url).href;
      root.append(Object.assign(document.createElement('link'), { rel: 'stylesheet', href, media: `(prefers-color-scheme: ${scheme})` }));
    }
  }

  setProvider(fn) {
    this.#pageProvider = fn;
    this.#settings = this.#initialSettings();
    if (this.#connected) this.#rebuild();
  }

  setOptions(options) {
    this.#options = { ...options };
    if (this.#connected) this.#rebuild();
  }

  get runtime() {
    return this.#runtime;
  }

  get ready() {
    return this.#ready;
  }

  // The attributes' choice, or the page's provider; at boot the person's own choice, if one
  // was kept, wins over the attributes (an attribute changed later wins over it).
  #initialSettings({ remembered = true } = {}) {
    const settings = initialSettings(this.#element);
    if (this.#pageProvider) return { ...settings, kind: 'page' };
    let kept = null;
    try {
      kept = remembered ? modelChoice.read(readConfig(this.#element)) : null;
    } catch {
      // A bad storage attribute: the build reports it.
    }
    return kept ? { ...settings, ...kept } : settings;
  }

  connect() {
    this.#connected = true;
    this.#rebuild();
  }

  disconnect() {
    this.#connected = false;
    this.#chat?.stop();
    this.#enqueue(async () => {
      if (this.#connected) return;
      this.#runtime?.close();
      this.#runtime = null;
    });
  }

  /** An attribute that configures the runtime changed: make it again. */
  attributeChanged(name) {
    if (!this.#connected) return;
    if (PROVIDER_ATTRIBUTES.includes(name)) this.#settings = this.#initialSettings({ remembered: false });
    if (name === 'global-memory') this.#globalMemory = null;
    this.#rebuild();
  }

  #wire() {
    const { chat, input, stop } = this.#el;
    chat.addEventListener('submit', (event) => {
      event.preventDefault();
      this.#send();
    });
    input.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter' || event.shiftKey || event.isComposing || event.altKey || event.ctrlKey || event.metaKey) return;
      event.preventDefault();
      this.#send();
    });
    stop.addEventListener('click', () => this.#chat?.stop());
    this.#root.getElementById('messages').addEventListener('click', (event) => {
      const button = event.target.closest?.('button[data-action]');
      if (button) this.#act(button);
    });
  }

  // Work on the runtime, one piece at a time; a failure is the piece's own to report.
  #enqueue(work) {
    const next = this.#work.then(work);
    this.#work = next.catch(() => {});
    return next;
  }

  #unready() {
    this.#isReady = false;
    if (this.#settle) return;
    this.#ready = new Promise((resolve, reject) => {
      this.#settle = { resolve, reject };
    });
    this.#ready.catch(() => {}); // a boot failure is shown in the widget; awaiting it still throws
  }

  #settleReady(how, value) {
    this.#settle?.[how](value);
    this.#settle = null;
  }

  #rebuild() {
    this.#unready();
    if (!this.#rebuildQueued) {
      this.#rebuildQueued = true;
      this.#enqueue(() => {
        this.#rebuildQueued = false;
        return this.#build();
      });
    }
    return this.#ready;
  }

  async #build() {
    if (!this.#connected) return;
    this.#setComposer(false);
    this.#strip.start();
    try {
      const config = readConfig(this.#element);
      this.#globalMemory ??= globalMemoryChoice.read(config) ?? config.globalMemory;
      await Promise.all([loadAgrun(), loadMarkdown()]);
      this.#strip.progress({ stage: 'script', loaded: 1, total: 1 });
      const provider = await resolveProvider(this.#settings, {
        pageProvider: this.#pageProvider, apiKey: this.#apiKey, cache: this.#inPage, words: this.#words,
        onModelProgress: (event) => this.#strip.modelProgress(event),
      });
      const runtime = await this.#factory.create(this.#conversations.configFor(config), {
        provider, globalMemory: this.#globalMemory, options: this.#options,
        onProgress: (event) => this.#strip.progress(event),
      });
      // The previous runtime (same session) is closed only now: a failed change keeps it.
      this.#runtime?.close();
      this.#runtime = runtime;
      // Settings changed while it was made: the build queued after this one is the ready one.
      if (!this.#connected || this.#rebuildQueued) return;
      this.#bindChat(runtime);
      this.#strip.syncBanner(runtime.storageStatus());
      this.#strip.settle(this.#words.ready);
      this.#setComposer(true);
      this.#panels.refresh(['memory', 'why']);
      this.#isReady = true;
      this.#settleReady('resolve', runtime);
      this.#emit('agrun-chat-ready', { runtime });
      if (!this.#focusedOnce && this.#element.hasAttribute('autofocus')) this.#el.input.focus();
      this.#focusedOnce = true;
    } catch (error) {
      if (this.#rebuildQueued) return;
      this.#strip.settle(this.#runtime ? this.#words.changeKept(error.message) : this.#words.couldNotStart(error.message));
      this.#setComposer(Boolean(this.#runtime));
      this.#isReady = Boolean(this.#runtime);
      this.#settleReady('reject', error);
      this.#emit('agrun-chat-error', { error });
      throw error;
    }
  }

  #setComposer(ready) {
    this.#el.send.disabled = !ready || this.#busy;
  }

  // One chat controller per runtime: a new runtime (same session) reads the history anew.
  #bindChat(runtime) {
    this.#unsubscribe();
    this.#chat = createChat(runtime);
    this.#unsubscribe = this.#chat.subscribe(() => this.#scheduleDraw());
    this.#draw();
    this.#transcript.scrollToEnd();
  }

  #draw() {
    const { messages } = this.#chat;
    this.#transcript.render(messages);
    const empty = this.#root.getElementById('empty');
    if (messages.length) {
      empty.hidden = true;
      return;
    }
    empty.replaceChildren(...emptyChat(this.#settings, this.#words, () => this.#useBundledModel()));
    empty.hidden = false;
  }

  // The demo page's model (its model-url attribute) in one click, as Settings would apply it.
  async #useBundledModel() {
    const said = await this.#applySettings({ ...this.#settings, kind: 'in-page', modelUrl: this.#element.getAttribute('model-url') });
    this.#announce(said);
    this.#el.input.focus();
  }

  // Streamed pieces come faster than frames: draw once a frame.
  #scheduleDraw() {
    if (this.#drawFrame) return;
    this.#drawFrame = requestAnimationFrame(() => {
      this.#drawFrame = 0;
      if (this.#chat) this.#draw();
    });
  }

  #send() {
    const { input } = this.#el;
    const text = input.value;
    if (!text.trim() || !this.#chat || this.#busy || !this.#isReady) return;
    input.value = '';
    const editing = this.#editing.id;
    this.#editing.stop(false);
    this.#turnWith((chat) => (editing ? chat.edit(editing, text) : chat.send(text)));
  }

  // Run one turn of the chat (send, retry, regenerate, edit) after the work queued before it.
  #turnWith(start) {
    if (this.#busy || !this.#chat) {
      this.#announce(this.#words.busy);
      return;
    }
    const chat = this.#chat;
    this.#busy = true;
    this.#turnUi(true);
    this.#enqueue(async () => {
      try {
        await start(chat);
        if (chat.lastResult) this.#emit('agrun-chat-turn', { result: chat.lastResult, error: chat.error });
      } finally {
        this.#busy = false;
        this.#turnUi(false);
        this.#strip.syncBanner(this.#runtime?.storageStatus());
        this.#panels.refresh(['memory', 'why']);
        this.#conversations.afterTurn();
      }
    });
  }

  // A message's or an answer's button (transcript.js names each by data-action).
  #act(button) {
    const chat = this.#chat;
    const id = button.closest('li')?.dataset.id;
    const message = chat?.messages.find((m) => m.id === id);
    if (!message) return;
    const action = button.dataset.action;
    if (action === 'copy') copyText(messageText(message), this.#words).then((said) => this.#announce(said));
    else if (action === 'copy-code') copyText(button.parentElement.querySelector('pre').textContent, this.#words).then((said) => this.#announce(said));
    else if (action === 'regenerate') this.#turnWith((c) => c.regenerate());
    else if (action === 'retry') this.#turnWith((c) => c.retry(id));
    else if (action === 'answer') this.#turnWith((c) => c.send(button.dataset.text));
    else if (action === 'edit') this.#editing.start(message.id, messageText(message));
    else if (action === 'why' && message.runId) this.#panels.showWhy(message.runId, messageText(message), button);
  }

  #turnUi(running) {
    const { stop, status, input } = this.#el;
    const stopHadFocus = this.#root.activeElement === stop;
    this.#root.getElementById('transcript').setAttribute('aria-busy', String(running));
    stop.hidden = !running;
    this.#setComposer(this.#isReady);
    status.textContent = running ? this.#words.answering : this.#words.ready;
    // Focus on Stop, or lost when Send was disabled under it, goes back to the message box;
    // focus the person put elsewhere stays there.
    const lost = !running && (document.activeElement === document.body || document.activeElement === null);
    if (stopHadFocus || lost) input.focus();
  }

  #forget(entry, index) {
    return this.#enqueue(async () => {
      try {
        if (!this.#runtime) throw new Error(this.#words.restarting);
        await this.#runtime.forgetGlobalMemory(entry.id);
        this.#announce(this.#words.forgot(entry.text));
      } catch (error) {
        this.#announce(this.#words.forgetFailed(entry.text, error.message));
      }
      this.#panels.refresh(['memory']);
      focusAfterForget(this.#root.getElementById('memory-content'), index);
    });
  }

  async #toggleGlobalMemory() {
    this.#globalMemory = !this.#globalMemory;
    globalMemoryChoice.write(readConfig(this.#element), this.#globalMemory);
    const button = this.#root.getElementById('global-switch');
    button?.setAttribute('aria-checked', String(this.#globalMemory));
    await this.#rebuild().catch(() => {});
    if (this.#panels.open === 'memory') this.#root.getElementById('global-switch')?.focus();
    this.#announce(this.#globalMemory ? this.#words.globalOn : this.#words.globalOff);
  }

  async #applySettings(settings, apiKey) {
    const previous = { settings: this.#settings, apiKey: this.#apiKey };
    this.#settings = settings;
    if (apiKey) this.#apiKey = apiKey;
    if (settings.kind !== 'hosted') this.#apiKey = ''; // held no longer than it is used
    try {
      // A server is asked before the first turn needs it (the in-page model's file is
      // checked as it downloads, in the build).
      if (settings.kind === 'local') await checkServer(settings.localUrl, '', this.#words);
      if (settings.kind === 'hosted') await checkServer(settings.hostedUrl, this.#apiKey, this.#words);
      await this.#rebuild();
      if (settings.kind !== 'page') modelChoice.write(readConfig(this.#element), settings);
      return this.#words.answersNow(describeProvider(settings, this.#words));
    } catch (error) {
      this.#settings = previous.settings;
      this.#apiKey = previous.apiKey;
      return this.#words.didNotWork(error.message);
    }
  }

  #storageDegraded({ reason }) {
    this.#strip.banner(true, reason);
    this.#emit('agrun-chat-storage', { degraded: true, reason });
  }

  // The browser found the saved conversations damaged and deleted them (Chromium, after a
  // killed browser tore its IndexedDB log): nothing to bring back, but the person is told.
  #dataLoss({ dataLoss, message }) {
    this.#strip.banner(false, undefined, true);
    this.#emit('agrun-chat-storage', { degraded: false, dataLoss, message });
  }

  #storageRestored() {
    this.#strip.banner(false);
    this.#announce(this.#words.savingBack);
    this.#emit('agrun-chat-storage', { degraded: false });
  }

  #announce(text) {
    this.#el.announce.textContent = text;
  }

  #emit(type, detail) {
    this.#element.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }
}
