// The "why" panel: the context pack the last model call was sent (rt.lastPack()), layer by
// layer with each entry's sources, and what was left out of it and why.
import { clip, h } from './dom.js';
import { WORDS } from './words.js';

/** Fill `content` from `pack` (rt.lastPack(); null before any model call), in the words.js table `words`. */
export function renderWhyPanel(content, pack, words = WORDS) {
  const w = words.whyPanel;
  if (!pack) {
    content.replaceChildren(h('p', { class: 'note' }, w.noPack));
    return;
  }
  const layers = Object.entries(pack.layers ?? {});
  const filled = layers.filter(([, entries]) => entries.length);
  const empty = layers.filter(([, entries]) => !entries.length).map(([name]) => name);
  const dropped = pack.compressionMetadata?.dropped ?? [];
  content.replaceChildren(
    h('p', {}, w.madeFrom(filled.reduce((n, [, e]) => n + e.length, 0), pack.budgetUsed, pack.budgetLimit)),
    ...filled.flatMap(([name, entries]) => layer(name, entries, w)),
    empty.length ? h('p', { class: 'note' }, w.emptyLayers(empty.join(', '))) : null,
    h('h4', {}, w.leftOut),
    dropped.length
      ? h('ul', { class: 'dropped' }, dropped.map((item) => droppedItem(item, w)))
      : h('p', { class: 'note' }, w.nothingLeftOut),
  );
}

function layer(name, entries, w) {
  const title = w.layers[name] ? `${name}, ${w.layers[name]}` : w.extension(name);
  return [
    h('h4', {}, `${title} (${entries.length})`),
    h('ul', { class: 'layer' }, entries.map((entry) => h('li', {},
      h('span', { class: 'kind' }, `${entry.role ?? entry.kind}${entry.compressed ? `, ${w.shortened}` : ''}: `),
      clip(entry.content, 160),
      entry.sources?.length ? h('div', { class: 'source' }, w.from(entry.sources.join(', '))) : null))),
  ];
}

function droppedItem(item, w) {
  const span = item.first === item.last ? item.first : `${item.first} … ${item.last}`;
  return h('li', {},
    `${w.dropped(item.count ?? 1, item.kind)}: ${w.reasons[item.reason] ?? item.reason}`,
    h('div', { class: 'source' }, span));
}
