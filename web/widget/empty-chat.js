// What the empty conversation says: where answers come from, and how to connect a model (the
// demo page's bundled model in one click, where the element names one).
import { describeProvider } from './provider.js';

/** The empty chat's elements for `settings`; `useBundled` is the bundled model's button's action. */
export function emptyChat(settings, words, useBundled) {
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
