// What <agrun-chat> does once its shell is painted: makes the runtime (again when a setting
// changes), runs turns, streams answers, and fills the panels. agrun-chat.js loads it beside
// agrun.js, so the element's first paint waits for neither.
import { createChat, messageText } from './chat.js';
import { Conversations } from './conversations.js';
import { headingOffset, levelHeadings } from './dom.js';
import { loadMarkdown } from './markdown.js';
import { focusAfterForget, renderMemoryPanel } from './memory-panel.js';
import { bootProgress } from './progress.js';
import { checkServer, describeProvider, initialSettings, resolveProvider } from './provider.js';
import { RuntimeFactory, globalMemoryChoice, loadAgrun, modelChoice, readConfig } from './session.js';
import { renderSettingsPanel } from './settings-panel.js';
import { Transcript } from './transcript.js';
import { renderRunWhy, renderWhyPanel } from './why-panel.js';
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
  #editing = null; // the id of the message being edited in the message box
  #drawFrame = 0;
  #open = null;
  #why = null; // { runId, answer, button }: the answer whose Why opened the why panel; null for the toolbar's
  #whyRead = 0; // which rt.why() read the panel waits for (a later one wins)
  #ready;
  #settle = null; // while #ready is pending
  #isReady = false;
  #percent = 0;
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
    });
    this.#pageProvider = provider;
    this.#options = { ...options };
    this.#settings = this.#initialSettings();
    this.#conversations = new Conversations({
      element, words,
      runtime: () => this.#runtime,
      config: () => readConfig(element),
      enqueue: (work) => this.#enqueue(work),
      rebuild: () => this.#rebuild(),
      rebind: () => this.#runtime && this.#bindChat(this.#runtime),
      announce: (text) => this.#announce(text),
      isOpen: () => this.#open === 'chats',
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
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && this.#editing) this.#stopEditing(true);
    });
    this.#root.getElementById('messages').addEventListener('click', (event) => {
      const button = event.target.closest?.('button[data-action]');
      if (button) this.#act(button);
    });
    this.#root.addEventListener('click', (event) => {
      const button = event.target.closest?.('button[data-panel], button[data-close]');
      if (button?.dataset.panel) {
        if (button.dataset.panel === 'why') this.#why = null; // the toolbar's: the last pack
        this.#toggle(button.dataset.panel);
      }
      if (button?.dataset.close) this.#closePanel(true);
    });
    this.#root.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || !this.#open) return;
      const inPanel = event.composedPath().some((node) => node.id === `${this.#open}-panel` || node.dataset?.panel);
      if (!inPanel) return;
      event.preventDefault();
      this.#closePanel(true);
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
    this.#percent = 0;
    this.#progress({ stage: 'script', loaded: 0, total: 1 });
    this.#el.boot.hidden = false;
    try {
      const config = readConfig(this.#element);
      this.#globalMemory ??= globalMemoryChoice.read(config) ?? config.globalMemory;
      await Promise.all([loadAgrun(), loadMarkdown()]);
      this.#progress({ stage: 'script', loaded: 1, total: 1 });
      const provider = await resolveProvider(this.#settings, {
        pageProvider: this.#pageProvider, apiKey: this.#apiKey, cache: this.#inPage, words: this.#words,
        onModelProgress: (event) => this.#modelProgress(event),
      });
      const runtime = await this.#factory.create(this.#conversations.configFor(config), {
        provider, globalMemory: this.#globalMemory, options: this.#options,
        onProgress: (event) => this.#progress(event),
      });
      // The previous runtime (same session) is closed only now: a failed change keeps it.
      this.#runtime?.close();
      this.#runtime = runtime;
      // Settings changed while it was made: the build queued after this one is the ready one.
      if (!this.#connected || this.#rebuildQueued) return;
      this.#bindChat(runtime);
      this.#syncBanner();
      this.#el.boot.hidden = true;
      this.#el.status.textContent = this.#words.ready;
      this.#setComposer(true);
      this.#refreshPanel(['memory', 'why']);
      this.#isReady = true;
      this.#settleReady('resolve', runtime);
      this.#emit('agrun-chat-ready', { runtime });
      if (!this.#focusedOnce && this.#element.hasAttribute('autofocus')) this.#el.input.focus();
      this.#focusedOnce = true;
    } catch (error) {
      if (this.#rebuildQueued) return;
      this.#el.boot.hidden = true;
      this.#el.status.textContent = this.#runtime
        ? this.#words.changeKept(error.message)
        : this.#words.couldNotStart(error.message);
      this.#setComposer(Boolean(this.#runtime));
      this.#isReady = Boolean(this.#runtime);
      this.#settleReady('reject', error);
      this.#emit('agrun-chat-error', { error });
      throw error;
    }
  }

  #progress(event) {
    const { percent, label } = bootProgress(event, this.#percent, this.#words);
    this.#percent = percent;
    this.#showProgress(percent, label);
  }

  #showProgress(percent, label) {
    this.#el.bar.style.setProperty('--progress', String(percent));
    this.#el.bar.setAttribute('aria-valuenow', String(percent));
    this.#el.bar.setAttribute('aria-valuetext', label);
    this.#el.status.textContent = label;
  }

  // The in-page model's file downloading: bytes and percent on the bar, which the boot then
  // takes up again where it was.
  #modelProgress({ loaded, total }) {
    const percent = total ? Math.floor((loaded / total) * 100) : 0;
    this.#el.boot.hidden = false;
    this.#showProgress(percent, this.#words.downloading(loaded, total));
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
    const editing = this.#editing;
    this.#stopEditing(false);
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
        this.#syncBanner();
        this.#refreshPanel(['memory', 'why']);
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
    if (action === 'copy') this.#copy(messageText(message));
    else if (action === 'copy-code') this.#copy(button.parentElement.querySelector('pre').textContent);
    else if (action === 'regenerate') this.#turnWith((c) => c.regenerate());
    else if (action === 'retry') this.#turnWith((c) => c.retry(id));
    else if (action === 'answer') this.#turnWith((c) => c.send(button.dataset.text));
    else if (action === 'edit') this.#startEditing(message);
    else if (action === 'why' && message.runId) this.#showWhy(message, button);
  }

  #startEditing(message) {
    const { input } = this.#el;
    this.#editing = message.id;
    input.value = messageText(message);
    input.setAttribute('aria-describedby', 'editing hint');
    Object.assign(this.#root.getElementById('editing'), { hidden: false, textContent: this.#words.editing });
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  }

  #stopEditing(cancelled) {
    if (!this.#editing) return;
    this.#editing = null;
    this.#root.getElementById('editing').hidden = true;
    this.#el.input.setAttribute('aria-describedby', 'hint');
    if (cancelled) {
      this.#el.input.value = '';
      this.#announce(this.#words.editCancelled);
    }
  }

  async #copy(text) {
    try {
      await navigator.clipboard.writeText(text);
      this.#announce(this.#words.copied);
    } catch {
      this.#announce(this.#words.copyFailed);
    }
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

  // An answer's Why: the why panel, with that answer's run.
  #showWhy(message, button) {
    this.#why = { runId: message.runId, answer: messageText(message), button };
    if (this.#open === 'why') {
      this.#refreshPanel(['why']);
      this.#root.getElementById('why-heading').focus();
    } else {
      this.#openPanel('why');
    }
  }

  #toggle(name) {
    if (this.#open === name) this.#closePanel(true);
    else this.#openPanel(name);
  }

  #openPanel(name) {
    this.#closePanel(false);
    this.#open = name;
    this.#root.getElementById(`${name}-panel`).hidden = false;
    this.#root.getElementById(`${name}-toggle`).setAttribute('aria-expanded', 'true');
    this.#el.body.classList.add('panel-open');
    this.#refreshPanel([name]);
    this.#root.getElementById(`${name}-heading`).focus();
  }

  #closePanel(returnFocus) {
    const name = this.#open;
    if (!name) return;
    this.#open = null;
    this.#root.getElementById(`${name}-panel`).hidden = true;
    const toggle = this.#root.getElementById(`${name}-toggle`);
    toggle.setAttribute('aria-expanded', 'false');
    this.#el.body.classList.remove('panel-open');
    // Back to what opened it: an answer's Why button if it is still there, else the toolbar.
    const opener = name === 'why' && this.#why?.button.isConnected ? this.#why.button : toggle;
    if (returnFocus) opener.focus();
  }

  // Draw the open panel again, if it is one of `names`.
  #refreshPanel(names) {
    const name = this.#open;
    if (!name || !names.includes(name)) return;
    const content = this.#root.getElementById(`${name}-content`);
    const focused = content.contains(this.#root.activeElement) ? focusKey(this.#root.activeElement) : null;
    this.#renderPanel(name, content);
    levelHeadings(content, headingOffset(this.#element));
    // Drawn again under the person's focus (a turn ended): put it back where it was.
    if (focused) content.querySelector(focused)?.focus();
  }

  #renderPanel(name, content) {
    const runtime = this.#runtime;
    if (name === 'settings') {
      renderSettingsPanel(content, this.#settings, {
        words: this.#words, pageProvider: Boolean(this.#pageProvider), keyHeld: Boolean(this.#apiKey),
        apply: (settings, apiKey) => this.#applySettings(settings, apiKey),
      });
    } else if (name === 'chats') {
      this.#conversations.render(content);
    } else if (!runtime) {
      content.replaceChildren(Object.assign(document.createElement('p'), { className: 'note', textContent: this.#words.starting }));
    } else if (name === 'why' && this.#why) {
      this.#readWhy(runtime, this.#why, content);
    } else if (name === 'why') {
      renderWhyPanel(content, runtime.lastPack(), this.#words);
    } else {
      renderMemoryPanel(content, {
        sessionMemory: runtime.sessionMemory(), globalMemory: runtime.globalMemory(), enabled: this.#globalMemory,
      }, {
        words: this.#words,
        forget: (entry, index) => this.#forget(entry, index),
        toggle: () => this.#toggleGlobalMemory(),
      });
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

  #forget(entry, index) {
    return this.#enqueue(async () => {
      try {
        if (!this.#runtime) throw new Error(this.#words.restarting);
        await this.#runtime.forgetGlobalMemory(entry.id);
        this.#announce(this.#words.forgot(entry.text));
      } catch (error) {
        this.#announce(this.#words.forgetFailed(entry.text, error.message));
      }
      this.#refreshPanel(['memory']);
      focusAfterForget(this.#root.getElementById('memory-content'), index);
    });
  }

  async #toggleGlobalMemory() {
    this.#globalMemory = !this.#globalMemory;
    globalMemoryChoice.write(readConfig(this.#element), this.#globalMemory);
    const button = this.#root.getElementById('global-switch');
    button?.setAttribute('aria-checked', String(this.#globalMemory));
    await this.#rebuild().catch(() => {});
    if (this.#open === 'memory') this.#root.getElementById('global-switch')?.focus();
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
    this.#showBanner(reason);
    this.#emit('agrun-chat-storage', { degraded: true, reason });
  }

  #storageRestored() {
    this.#el.banner.hidden = true;
    this.#el.banner.textContent = '';
    this.#announce(this.#words.savingBack);
    this.#emit('agrun-chat-storage', { degraded: false });
  }

  #showBanner(reason) {
    const { banner } = this.#el;
    banner.textContent = this.#words.savingStopped(reason);
    banner.hidden = false;
  }

  #syncBanner() {
    const status = this.#runtime?.storageStatus();
    if (status?.degraded) this.#showBanner(status.reason);
    else if (status) this.#el.banner.hidden = true;
  }

  #announce(text) {
    this.#el.announce.textContent = text;
  }

  #emit(type, detail) {
    this.#element.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }
}

// What the empty conversation says: where answers come from, and how to connect a model.
function emptyChat(settings, words, useBundled) {
  const p = (text) => Object.assign(document.createElement('p'), { textContent: text });
  if (settings.kind !== 'none') return [p(words.emptyWithModel(describeProvider(settings, words)))];
  const said = [p(words.emptyEcho)];
  if (settings.modelUrl) {
    said.push(Object.assign(document.createElement('button'), {
      type: 'button', className: 'action', id: 'use-bundled', textContent: words.useBundled,
      onclick: useBundled,
    }));
  }
  return said;
}

// A selector that finds `element` again after its panel is drawn anew.
function focusKey(element) {
  if (element.id) return `#${CSS.escape(element.id)}`;
  if (element.dataset.index !== undefined) return `[part="${element.getAttribute('part')}"][data-index="${element.dataset.index}"]`;
  return null;
}
