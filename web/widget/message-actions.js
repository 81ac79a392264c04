// What a person does to a message besides sending: edit it (its words go to the message box,
// a note says so, Escape cancels; the next send is chat.edit) and copy it.

export class MessageEditing {
  #root;
  #input;
  #words;
  #announce;
  #id = null;

  /**
   * @param {ShadowRoot} root the shell (its #editing note)
   * @param {HTMLTextAreaElement} input the message box
   * @param {object} words the words.js table
   * @param {(text: string) => void} announce says a sentence to a screen reader
   */
  constructor(root, input, words, announce) {
    this.#root = root;
    this.#input = input;
    this.#words = words;
    this.#announce = announce;
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && this.#id) this.stop(true);
    });
  }

  /** The id of the message being edited, or null. */
  get id() {
    return this.#id;
  }

  /** Put message `id`'s `text` in the box, and say so. */
  start(id, text) {
    const input = this.#input;
    this.#id = id;
    input.value = text;
    input.setAttribute('aria-describedby', 'editing hint');
    Object.assign(this.#root.getElementById('editing'), { hidden: false, textContent: this.#words.editing });
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  }

  /** Stop editing: sent (`cancelled` false), or cancelled, which empties the box. */
  stop(cancelled) {
    if (!this.#id) return;
    this.#id = null;
    this.#root.getElementById('editing').hidden = true;
    this.#input.setAttribute('aria-describedby', 'hint');
    if (cancelled) {
      this.#input.value = '';
      this.#announce(this.#words.editCancelled);
    }
  }
}

/** Copy `text` to the clipboard; resolves to what to announce (copied, or refused). */
export async function copyText(text, words) {
  try {
    await navigator.clipboard.writeText(text);
    return words.copied;
  } catch {
    return words.copyFailed;
  }
}
