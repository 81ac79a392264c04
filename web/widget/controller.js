// What <agrun-chat> does once its shell is painted: makes the runtime (again when a setting
// changes), runs turns, streams answers, and fills the panels. agrun-chat.js loads it beside
// agrun.js, so the element's first paint waits for neither.
import { headingOffset, levelHeadings } from './dom.js';
import { focusAfterForget, renderMemoryPanel } from './memory-panel.js';
import { bootProgress } from './progress.js';
import { describeProvider, initialSettings, resolveProvider } from './provider.js';
import { RuntimeFactory, globalMemoryChoice, loadAgrun, readConfig } from './session.js';
import { renderSettingsPanel } from './settings-panel.js';
import { Transcript, outputText } from './transcript.js';
import { renderWhyPanel } from './why-panel.js';

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
  #turn = null;
  #open = null;
  #ready;
  #settle = null; // while #ready is pending
  #isReady = false;
  #percent = 0;
  #connected = false;
  #focusedOnce = false;

  /**
   * @param {HTMLElement} element the <agrun-chat> (its attributes are read at each build)
   * @param {ShadowRoot} root its shadow root, holding the shell
   * @param {{ provider: Function | null, options: object }} initial what the page set before
   */
  constructor(element, root, { provider, options }) {
    this.#element = element;
    this.#root = root;
    const byId = (id) => root.getElementById(id);
    this.#el = Object.fromEntries(
      ['status', 'boot', 'bar', 'banner', 'announce', 'body', 'chat', 'input', 'send', 'stop']
        .map((id) => [id, byId(id)]),
    );
    this.#transcript = new Transcript(byId('transcript'), byId('messages'));
    this.#factory = new RuntimeFactory({
      onStorageDegraded: (event) => this.#storageDegraded(event),
      onStorageRestored: () => this.#storageRestored(),
    });
    this.#pageProvider = provider;
    this.#options = { ...options };
    this.#settings = this.#initialSettings();
    this.#unready();
    this.#wire();
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

  #initialSettings() {
    const settings = initialSettings(this.#element);
    return this.#pageProvider ? { ...settings, kind: 'page' } : settings;
  }

  connect() {
    this.#connected = true;
    this.#rebuild();
  }

  disconnect() {
    this.#connected = false;
    this.#turn?.abort();
    this.#enqueue(async () => {
      if (this.#connected) return;
      this.#runtime?.close();
      this.#runtime = null;
    });
  }

  /** An attribute that configures the runtime changed: make it again. */
  attributeChanged(name) {
    if (!this.#connected) return;
    if (PROVIDER_ATTRIBUTES.includes(name)) this.#settings = this.#initialSettings();
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
    stop.addEventListener('click', () => this.#turn?.abort());
    this.#root.addEventListener('click', (event) => {
      const button = event.target.closest?.('button[data-panel], button[data-close]');
      if (button?.dataset.panel) this.#toggle(button.dataset.panel);
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
      await loadAgrun();
      this.#progress({ stage: 'script', loaded: 1, total: 1 });
      const provider = await resolveProvider(this.#settings, {
        pageProvider: this.#pageProvider, apiKey: this.#apiKey, cache: this.#inPage,
      });
      const runtime = await this.#factory.create(config, {
        provider, globalMemory: this.#globalMemory, options: this.#options,
        onProgress: (event) => this.#progress(event),
      });
      // The previous runtime (same session) is closed only now: a failed change keeps it.
      this.#runtime?.close();
      this.#runtime = runtime;
      // Settings changed while it was made: the build queued after this one is the ready one.
      if (!this.#connected || this.#rebuildQueued) return;
      this.#transcript.show(runtime.history(), (ref) => runtime.content(ref));
      this.#syncBanner();
      this.#el.boot.hidden = true;
      this.#el.status.textContent = 'Ready';
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
        ? `That change did not work (${error.message}); answers still come from before.`
        : `agrun could not start: ${error.message}`;
      this.#setComposer(Boolean(this.#runtime));
      this.#isReady = Boolean(this.#runtime);
      this.#settleReady('reject', error);
      this.#emit('agrun-chat-error', { error });
      throw error;
    }
  }

  #progress(event) {
    const { percent, label } = bootProgress(event, this.#percent);
    this.#percent = percent;
    this.#el.bar.style.setProperty('--progress', String(percent));
    this.#el.bar.setAttribute('aria-valuenow', String(percent));
    this.#el.bar.setAttribute('aria-valuetext', label);
    this.#el.status.textContent = label;
  }

  #setComposer(ready) {
    this.#el.send.disabled = !ready || Boolean(this.#turn);
  }

  #send() {
    const { input } = this.#el;
    const text = input.value;
    const runtime = this.#runtime;
    if (!text.trim() || !runtime || this.#turn || !this.#isReady) return;
    input.value = '';
    const said = this.#transcript.add('user', text);
    const turn = new AbortController();
    this.#turn = turn;
    this.#turnUi(true);
    this.#enqueue(async () => {
      let answer = null;
      try {
        const result = await runtime.run(text, {
          signal: turn.signal,
          onToken: (piece) => {
            answer ??= this.#transcript.add('agent');
            this.#transcript.stream(answer, piece);
          },
        });
        if (result.state.status !== 'succeeded') {
          throw new Error(result.error?.message ?? result.state.error?.message ?? 'the run failed');
        }
        const reply = outputText(result.output);
        if (answer) this.#transcript.settle(answer, reply);
        else answer = this.#transcript.add('agent', reply);
        this.#emit('agrun-chat-turn', { result });
      } catch (error) {
        // The turn left nothing in the session: take it out of the transcript too, and
        // give the person their words back to send again.
        answer?.remove();
        said.remove();
        input.value = input.value ? `${text}\n${input.value}` : text;
        const why = error.name === 'AbortError' ? 'Stopped before the answer.' : `That did not go through: ${error.message}`;
        this.#transcript.add('error', `${why} Your message is back in the box.`);
      } finally {
        this.#turn = null;
        this.#turnUi(false);
        this.#syncBanner();
        this.#refreshPanel(['memory', 'why']);
      }
    });
  }

  #turnUi(running) {
    const { stop, status, input } = this.#el;
    const stopHadFocus = this.#root.activeElement === stop;
    this.#root.getElementById('transcript').setAttribute('aria-busy', String(running));
    stop.hidden = !running;
    this.#setComposer(this.#isReady);
    status.textContent = running ? 'Answering…' : 'Ready';
    // Focus on Stop, or lost when Send was disabled under it, goes back to the message box;
    // focus the person put elsewhere stays there.
    const lost = !running && (document.activeElement === document.body || document.activeElement === null);
    if (stopHadFocus || lost) input.focus();
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
    if (returnFocus) toggle.focus();
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
        pageProvider: Boolean(this.#pageProvider), keyHeld: Boolean(this.#apiKey),
        apply: (settings, apiKey) => this.#applySettings(settings, apiKey),
      });
    } else if (!runtime) {
      content.replaceChildren(Object.assign(document.createElement('p'), { className: 'note', textContent: 'agrun is starting…' }));
    } else if (name === 'why') {
      renderWhyPanel(content, runtime.lastPack());
    } else {
      renderMemoryPanel(content, {
        sessionMemory: runtime.sessionMemory(), globalMemory: runtime.globalMemory(), enabled: this.#globalMemory,
      }, {
        forget: (entry, index) => this.#forget(entry, index),
        toggle: () => this.#toggleGlobalMemory(),
      });
    }
  }

  #forget(entry, index) {
    return this.#enqueue(async () => {
      try {
        if (!this.#runtime) throw new Error('agrun is starting again');
        await this.#runtime.forgetGlobalMemory(entry.id);
        this.#announce(`Forgot “${entry.text}”.`);
      } catch (error) {
        this.#announce(`Could not forget “${entry.text}”: ${error.message}`);
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
    this.#announce(this.#globalMemory ? 'Global memory is on.' : 'Global memory is off.');
  }

  async #applySettings(settings, apiKey) {
    const previous = { settings: this.#settings, apiKey: this.#apiKey };
    this.#settings = settings;
    if (apiKey) this.#apiKey = apiKey;
    if (settings.kind !== 'hosted') this.#apiKey = ''; // held no longer than it is used
    try {
      await this.#rebuild();
      return `Answers now come from ${describeProvider(settings)}.`;
    } catch (error) {
      this.#settings = previous.settings;
      this.#apiKey = previous.apiKey;
      return `That did not work: ${error.message}`;
    }
  }

  #storageDegraded({ reason }) {
    this.#showBanner(reason);
    this.#emit('agrun-chat-storage', { degraded: true, reason });
  }

  #storageRestored() {
    this.#el.banner.hidden = true;
    this.#el.banner.textContent = '';
    this.#announce('Saving works again.');
    this.#emit('agrun-chat-storage', { degraded: false });
  }

  #showBanner(reason) {
    const { banner } = this.#el;
    banner.textContent = `Saving has stopped${reason ? ` (${reason})` : ''}: this conversation goes on, `
      + 'but what is said from now on will not survive a reload.';
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

// A selector that finds `element` again after its panel is drawn anew.
function focusKey(element) {
  if (element.id) return `#${CSS.escape(element.id)}`;
  if (element.dataset.index !== undefined) return `[part="${element.getAttribute('part')}"][data-index="${element.dataset.index}"]`;
  return null;
}
