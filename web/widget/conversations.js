// The conversations panel of <agrun-chat>: a new chat, the saved conversations (open one,
// rename it, delete it after a confirmation) and the open chat's export and import. The
// runtime does the work (rt.listSessions, renameSession, deleteSession, exportSession,
// importSession); this module draws the panel, says what happened, and remembers which
// conversation is open so a reload opens it again (beside the model choice, session.js).
//
// Opening a conversation is making the widget's runtime again on its session id (the
// controller's rebuild). A conversation is named after its first message until renamed.
import { clip, h } from './dom.js';
import { rememberedChoice } from './session.js';

const TITLE_FROM_MESSAGE = 60;

/** The conversation open in a widget, per database and session-id attribute. */
export const openConversation = rememberedChoice(
  ({ dbName, sessionId }) => `agrun-chat:open:${dbName ?? 'agrun'}:${sessionId ?? 'default'}`,
  { encode: String, decode: String },
);

export class Conversations {
  #host;
  #words;
  #open = undefined; // the chosen session id; undefined until read, null for the widget's own
  #list = null; // rt.listSessions() as last read, or an Error
  #mode = null; // { renaming: id } | { deleting: id } | null
  #focus = null; // selectors to focus the first of once the panel is drawn ('#a, #b')
  #titled = new Set(); // sessions known to have a title

  /**
   * @param {{ element: HTMLElement, words: object, runtime: () => object | null,
   *   enqueue: (work: Function) => Promise<any>, rebuild: () => Promise<any>,
   *   rebind: () => void, announce: (text: string) => void, content: () => HTMLElement,
   *   isOpen: () => boolean, config: () => object }} host what the controller lends
   */
  constructor(host) {
    this.#host = host;
    this.#words = host.words.chatList;
  }

  /** The runtime's config for the widget's `config`: its session is the open conversation. */
  configFor(config) {
    if (this.#open === undefined) this.#open = openConversation.read(config);
    return this.#open ? { ...config, sessionId: this.#open } : config;
  }

  /** Draw the panel into `content`: at once from what was last read, then from the store. */
  render(content) {
    this.#draw(content);
    this.#reload();
  }

  /** After a turn: name a conversation without a title after its first message. */
  afterTurn() {
    // The list is read again, not only redrawn: a panel opened while the name was being
    // stored drew the list from before it.
    return this.#host.enqueue(() => this.#nameAfterFirstMessage())
      .then(() => (this.#host.isOpen() ? this.#reload() : undefined), () => {});
  }

  async #reload() {
    const runtime = this.#host.runtime();
    if (!runtime) return;
    try {
      this.#list = await runtime.listSessions();
    } catch (error) {
      this.#list = error;
    }
    this.#refresh();
  }

  #refresh() {
    if (this.#host.isOpen()) this.#draw(this.#host.content());
  }

  #current() {
    return this.#host.runtime()?.storageStatus().sessionId ?? null;
  }

  #title(info) {
    return info?.title || this.#words.untitled;
  }

  #draw(content) {
    const w = this.#words;
    const stored = this.#host.config().storage !== 'none';
    const actions = h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'action', id: 'new-chat', on: { click: () => this.#newChat() } }, w.newChat),
      stored && h('button', { type: 'button', class: 'action', id: 'export-chat', on: { click: () => this.#export() } }, w.exportChat),
      stored && h('button', { type: 'button', class: 'action', id: 'import-chat', on: { click: () => content.querySelector('#import-file').click() } }, w.importChat),
      stored && h('input', {
        type: 'file', id: 'import-file', accept: '.json,application/json', hidden: true, 'aria-label': w.importFile,
        on: { change: (event) => this.#import(event.target) },
      }));
    // A redraw nobody asked to move the focus keeps it on the control it was on: the panel
    // is drawn again whenever the store is read, and the focus must not fall to the page.
    const active = content.getRootNode().activeElement;
    if (!this.#focus && active?.id && content.contains(active)) this.#focus = `#${CSS.escape(active.id)}`;
    content.replaceChildren(actions, ...(stored ? this.#listed() : [h('p', { class: 'note' }, w.noStorage)]));
    if (this.#focus) {
      // The first of the selectors that finds something (the list may have emptied).
      const target = this.#focus.split(',').map((selector) => content.querySelector(selector.trim())).find(Boolean);
      target?.focus();
      this.#focus = null;
    }
  }

  #listed() {
    const w = this.#words;
    const heading = h('h4', { id: 'chat-list-heading' }, w.saved);
    if (this.#list instanceof Error) return [heading, h('p', { class: 'note' }, w.failed(this.#list.message))];
    const sessions = [...(this.#list ?? [])].sort((a, b) => (b.lastCommittedAtMs ?? 0) - (a.lastCommittedAtMs ?? 0));
    if (!sessions.length) return [heading, h('p', { class: 'note' }, w.none)];
    return [heading, h('ul', { class: 'entries chat-list', 'aria-labelledby': 'chat-list-heading' },
      sessions.map((info, index) => h('li', { 'data-index': index }, this.#row(info, index))))];
  }

  #row(info, index) {
    const w = this.#words;
    const title = this.#title(info);
    const id = info.sessionId;
    if (this.#mode?.renaming === id) return this.#renameForm(info, index);
    if (this.#mode?.deleting === id) {
      return h('div', { class: 'confirm', role: 'group', 'aria-labelledby': `confirm-${index}` },
        h('p', { id: `confirm-${index}` }, w.confirmDelete(clip(title, 80))),
        h('button', { type: 'button', class: 'action', id: `confirm-delete-${index}`, on: { click: () => this.#delete(info) } }, w.delete),
        h('button', { type: 'button', class: 'action', id: `cancel-delete-${index}`, on: { click: () => this.#setMode(null, `#delete-${index}`) } }, w.cancel));
    }
    const current = id === this.#current();
    const when = info.lastCommittedAtMs ? w.updated(this.#when(info.lastCommittedAtMs)) : '';
    return [
      h('span', {},
        h('button', {
          type: 'button', class: 'chat-open', id: `open-${index}`, 'aria-current': current ? 'true' : null,
          on: { click: () => this.#openChat(id, title, `#open-${index}`) },
        }, clip(title, 120)),
        ' ', h('span', { class: 'kind' }, [current ? w.current : '', when].filter(Boolean).join(' · '))),
      h('span', { class: 'chat-tools' },
        h('button', { type: 'button', id: `rename-${index}`, 'aria-label': w.renameLabel(clip(title, 80)), on: { click: () => this.#setMode({ renaming: id }, '#rename-input') } }, w.rename),
        h('button', { type: 'button', id: `delete-${index}`, 'aria-label': w.deleteLabel(clip(title, 80)), on: { click: () => this.#setMode({ deleting: id }, `#cancel-delete-${index}`) } }, w.delete)),
    ];
  }

  #renameForm(info, index) {
    const w = this.#words;
    const input = h('input', { id: 'rename-input', value: info.title ?? '', maxlength: 200, autocomplete: 'off' });
    const cancel = () => this.#setMode(null, `#rename-${index}`);
    input.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape') return;
      event.preventDefault();
      event.stopPropagation(); // Escape here cancels the rename, not the panel
      cancel();
    });
    return h('form', { class: 'field rename', on: { submit: (event) => { event.preventDefault(); this.#rename(info, input.value, index); } } },
      h('label', { for: 'rename-input' }, w.newTitle),
      input,
      h('span', { class: 'actions' },
        h('button', { type: 'submit', class: 'action' }, w.save),
        h('button', { type: 'button', class: 'action', on: { click: cancel } }, w.cancel)));
  }

  #setMode(mode, focus) {
    this.#mode = mode;
    this.#focus = focus;
    this.#refresh();
  }

  #when(ms) {
    try {
      return new Intl.DateTimeFormat(this.#host.element.language, { dateStyle: 'medium', timeStyle: 'short' }).format(ms);
    } catch {
      return new Date(ms).toLocaleString();
    }
  }

  // Make the runtime again on `sessionId` (null: the widget's own), and remember it.
  async #switchTo(sessionId) {
    this.#open = sessionId;
    openConversation.write(this.#host.config(), sessionId ?? '');
    this.#mode = null;
    await this.#host.rebuild();
  }

  // An action ends by drawing the panel from the store, with the focus where it belongs, and
  // only then saying what happened: a person who hears "Deleted" and presses Tab moves
  // through the panel as it now is, not through one a late redraw is about to replace.
  async #settle(message, focus) {
    this.#mode = null;
    this.#focus = focus;
    await this.#reload();
    this.#host.announce(message);
  }

  async #openChat(sessionId, title, focus) {
    let message;
    try {
      if (sessionId !== this.#current()) await this.#switchTo(sessionId);
      message = this.#words.opened(title);
    } catch (error) {
      message = this.#words.failed(error.message);
    }
    await this.#settle(message, focus);
  }

  async #newChat() {
    let message;
    try {
      await this.#switchTo(`chat-${crypto.randomUUID()}`);
      message = this.#words.started;
    } catch (error) {
      message = this.#words.failed(error.message);
    }
    await this.#settle(message, '#new-chat');
  }

  async #rename(info, value, index) {
    const title = value.trim();
    if (!title) {
      this.#host.announce(this.#words.blankTitle);
      return;
    }
    let message;
    try {
      await this.#host.enqueue(() => this.#host.runtime().renameSession(info.sessionId, title));
      this.#titled.add(info.sessionId);
      message = this.#words.renamed(title);
    } catch (error) {
      message = this.#words.failed(error.message);
    }
    await this.#settle(message, `#open-${index}`);
  }

  // Deleting the open conversation opens a new chat (the runtime alone would keep its id).
  async #delete(info) {
    const title = this.#title(info);
    let message;
    try {
      await this.#host.enqueue(() => this.#host.runtime().deleteSession(info.sessionId));
      this.#titled.delete(info.sessionId);
      if (info.sessionId === this.#current()) await this.#switchTo(`chat-${crypto.randomUUID()}`);
      message = this.#words.deleted(title);
    } catch (error) {
      message = this.#words.failed(error.message);
    }
    await this.#settle(message, '#open-0, #new-chat');
  }

  async #export() {
    const runtime = this.#host.runtime();
    if (!runtime) return;
    try {
      const text = await this.#host.enqueue(() => runtime.exportSession());
      const name = `agrun-chat-${this.#current()}.json`;
      const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
      const link = h('a', { href: url, download: name, hidden: true });
      this.#host.content().append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 0);
      this.#host.announce(this.#words.exported(name));
    } catch (error) {
      this.#host.announce(error?.code === 'session_not_found' ? this.#words.nothingToExport : this.#words.failed(error.message));
    }
  }

  // An export file holds one session under its id: open that id, then import into it. A chat
  // already stored is opened, not overwritten.
  async #import(input) {
    const file = input.files?.[0];
    input.value = '';
    if (!file) return;
    const text = await file.text();
    let sessionId;
    try {
      sessionId = JSON.parse(text)?.session?.sessionId;
    } catch {
      // not JSON: said below
    }
    if (typeof sessionId !== 'string' || !sessionId) {
      this.#host.announce(this.#words.notAnExport);
      return;
    }
    await this.#reload();
    const stored = Array.isArray(this.#list) ? this.#list.find((info) => info.sessionId === sessionId) : null;
    const previous = this.#open;
    let message;
    try {
      await this.#switchTo(sessionId);
      if (stored) {
        message = this.#words.alreadyHere(this.#title(stored));
      } else {
        await this.#host.enqueue(() => this.#host.runtime().importSession(text));
        this.#host.rebind();
        await this.#host.enqueue(() => this.#nameAfterFirstMessage());
        await this.#reload();
        const info = Array.isArray(this.#list) ? this.#list.find((row) => row.sessionId === sessionId) : null;
        message = this.#words.imported(this.#title(info));
      }
    } catch (error) {
      if (!stored) await this.#switchTo(previous).catch(() => {});
      message = this.#words.failed(error.message);
    }
    await this.#settle(message, '#import-chat');
  }

  // A conversation is named after the person's first message, once.
  async #nameAfterFirstMessage() {
    const runtime = this.#host.runtime();
    const sessionId = this.#current();
    if (!runtime || !sessionId || this.#titled.has(sessionId) || this.#host.config().storage === 'none') return;
    const info = (await runtime.listSessions()).find((row) => row.sessionId === sessionId);
    if (info?.title) {
      this.#titled.add(sessionId);
      return;
    }
    const first = runtime.history().find((message) => message.role === 'user' && typeof message.content === 'string');
    const text = first?.content.replace(/\s+/g, ' ').trim();
    if (!text) return;
    await runtime.renameSession(sessionId, clip(text, TITLE_FROM_MESSAGE));
    this.#titled.add(sessionId);
  }
}
