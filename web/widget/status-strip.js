// The top of <agrun-chat> while it works: the status line, the progress bar of the boot (and
// of the in-page model's download, on the same bar), and the banner saying storage failed, or
// that the browser deleted what was saved before.
import { bootProgress } from './progress.js';

export class StatusStrip {
  #el;
  #words;
  #percent = 0;
  #lost = false; // the browser deleted the saved conversations when the store opened

  /**
   * @param {{ status: HTMLElement, boot: HTMLElement, bar: HTMLElement, banner: HTMLElement }} el
   *   the shell's elements; @param {object} words the words.js table
   */
  constructor(el, words) {
    this.#el = el;
    this.#words = words;
  }

  /** A boot begins: the bar shown, empty. */
  start() {
    this.#percent = 0;
    this.progress({ stage: 'script', loaded: 0, total: 1 });
    this.#el.boot.hidden = false;
  }

  /** A boot's progress event (createRuntime's onProgress); the bar never moves back. */
  progress(event) {
    const { percent, label } = bootProgress(event, this.#percent, this.#words);
    this.#percent = percent;
    this.#show(percent, label);
  }

  // The in-page model's file downloading: bytes and percent on the bar, which the boot then
  // takes up again where it was.
  modelProgress({ loaded, total }) {
    const percent = total ? Math.floor((loaded / total) * 100) : 0;
    this.#el.boot.hidden = false;
    this.#show(percent, this.#words.downloading(loaded, total));
  }

  /** The boot ended: the bar hidden, the status line saying `text`. */
  settle(text) {
    this.#el.boot.hidden = true;
    this.#el.status.textContent = text;
  }

  #show(percent, label) {
    const { bar, status } = this.#el;
    bar.style.setProperty('--progress', String(percent));
    bar.setAttribute('aria-valuenow', String(percent));
    bar.setAttribute('aria-valuetext', label);
    status.textContent = label;
  }

  /**
   * Storage stopped saving (`reason`), or, with no argument, saves again; `lost`: the browser
   * deleted the conversations saved before (said while saving works, until a reload).
   */
  banner(degraded, reason, lost = this.#lost) {
    this.#lost = lost;
    const { banner } = this.#el;
    const text = degraded ? this.#words.savingStopped(reason) : lost ? this.#words.storageLost : '';
    banner.textContent = text;
    banner.hidden = !text;
  }

  /** The banner as a runtime's storageStatus() says (nothing changes without a runtime). */
  syncBanner(status) {
    if (status) this.banner(status.degraded, status.reason, this.#lost || Boolean(status.dataLoss));
  }
}
