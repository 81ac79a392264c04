// The memory panel: what this session remembers (facts, preferences, decisions), global
// memory with a forget button per entry, and the switch that turns global memory off.
import { clip, h } from './dom.js';
import { WORDS } from './words.js';

const SESSION_GROUPS = ['facts', 'preferences', 'decisions'];

/**
 * Fill `content` from `{ sessionMemory, globalMemory, enabled }` (rt.sessionMemory(),
 * rt.globalMemory() and whether global memory is on). `forget(entry, index)` and `toggle()`
 * are called by the panel's buttons; its words come from the words.js table `words`.
 */
export function renderMemoryPanel(content, { sessionMemory, globalMemory, enabled }, { forget, toggle, words = WORDS }) {
  content.replaceChildren(
    h('h4', {}, words.thisSession),
    ...SESSION_GROUPS.map((key) => group(words.groups[key], words.noneYet[key], sessionMemory?.[key] ?? [])),
    h('h4', {}, words.globalMemory),
    h('p', { class: 'note' }, words.globalShared),
    h('div', { class: 'switch-row' },
      h('button', {
        type: 'button', role: 'switch', id: 'global-switch', part: 'switch',
        'aria-checked': String(enabled), on: { click: toggle },
      }, words.useGlobal)),
    enabled ? globalEntries(globalMemory, forget, words) : h('p', { class: 'note' }, words.globalIsOff),
  );
}

function group(title, none, entries) {
  return h('div', {},
    h('h5', { class: 'group-title' }, title),
    entries.length
      ? h('ul', {}, entries.map((entry) => h('li', {}, clip(entry.text))))
      : h('p', { class: 'note' }, none));
}

function globalEntries(entries, forget, words) {
  if (!entries.length) return h('p', { class: 'note', id: 'global-empty' }, words.globalEmpty);
  return h('ul', { class: 'entries', 'aria-label': words.globalEntries },
    entries.map((entry, index) => h('li', {},
      h('span', {}, h('span', { class: 'entry-text' }, clip(entry.text)), ' ', h('span', { class: 'kind' }, `(${entry.kind})`)),
      h('button', {
        type: 'button', part: 'forget-button', 'data-index': index,
        'aria-label': words.forgetEntry(clip(entry.text, 80)), on: { click: () => forget(entry, index) },
      }, words.forget))));
}

/** After entry `index` was forgotten: focus the forget button now at its place, or the switch. */
export function focusAfterForget(content, index) {
  const buttons = content.querySelectorAll('[part="forget-button"]');
  (buttons[Math.min(index, buttons.length - 1)] ?? content.querySelector('#global-switch'))?.focus();
}
