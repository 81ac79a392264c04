// The memory panel: what this session remembers (facts, preferences, decisions), global
// memory with a forget button per entry, and the switch that turns global memory off.
import { clip, h } from './dom.js';

const SESSION_GROUPS = [
  ['facts', 'Facts'],
  ['preferences', 'Preferences'],
  ['decisions', 'Decisions'],
];

/**
 * Fill `content` from `{ sessionMemory, globalMemory, enabled }` (rt.sessionMemory(),
 * rt.globalMemory() and whether global memory is on). `forget(entry, index)` and `toggle()`
 * are called by the panel's buttons.
 */
export function renderMemoryPanel(content, { sessionMemory, globalMemory, enabled }, { forget, toggle }) {
  content.replaceChildren(
    h('h4', {}, 'This session'),
    ...SESSION_GROUPS.map(([key, title]) => group(title, sessionMemory?.[key] ?? [])),
    h('h4', {}, 'Global memory'),
    h('p', { class: 'note' }, 'Shared by every conversation in this browser.'),
    h('div', { class: 'switch-row' },
      h('button', {
        type: 'button', role: 'switch', id: 'global-switch', part: 'switch',
        'aria-checked': String(enabled), on: { click: toggle },
      }, 'Use global memory')),
    enabled ? globalEntries(globalMemory, forget) : h('p', { class: 'note' },
      'Global memory is off: it is neither read nor written. What it holds stays stored.'),
  );
}

function group(title, entries) {
  return h('div', {},
    h('h5', { class: 'group-title' }, title),
    entries.length
      ? h('ul', {}, entries.map((entry) => h('li', {}, clip(entry.text))))
      : h('p', { class: 'note' }, `No ${title.toLowerCase()} yet.`));
}

function globalEntries(entries, forget) {
  if (!entries.length) return h('p', { class: 'note', id: 'global-empty' }, 'Nothing in global memory.');
  return h('ul', { class: 'entries', 'aria-label': 'Global memory entries' },
    entries.map((entry, index) => h('li', {},
      h('span', {}, h('span', { class: 'entry-text' }, clip(entry.text)), ' ', h('span', { class: 'kind' }, `(${entry.kind})`)),
      h('button', {
        type: 'button', part: 'forget-button', 'data-index': index,
        'aria-label': `Forget “${clip(entry.text, 80)}”`, on: { click: () => forget(entry, index) },
      }, 'Forget'))));
}

/** After entry `index` was forgotten: focus the forget button now at its place, or the switch. */
export function focusAfterForget(content, index) {
  const buttons = content.querySelectorAll('[part="forget-button"]');
  (buttons[Math.min(index, buttons.length - 1)] ?? content.querySelector('#global-switch'))?.focus();
}
