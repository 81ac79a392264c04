// The "why" panel: the context pack the last model call was sent (rt.lastPack()), layer by
// layer with each entry's sources, and what was left out of it and why.
import { clip, h } from './dom.js';

const LAYERS = {
  L0: 'live: instructions and the conversation',
  L1: 'stage: artifacts and approvals',
  L2: 'session: memory and summary',
  L3: 'project: durable memory',
  L4: 'archive',
};

const REASONS = {
  over_budget: 'did not fit the token budget',
  duplicate: 'repeated something already in the pack',
  superseded: 'replaced by a newer version',
  invalid_artifact: 'an artifact that did not validate',
  orphan_tool_result: 'a tool result without its call',
  orphan_reply: 'a reply whose question was left out',
  layer_not_requested: 'its layer was not asked for',
  moved_to_l3: 'merged into project memory (L3)',
  before_cursor: 'already seen before this turn',
};

/** Fill `content` from `pack` (rt.lastPack(); null before any model call). */
export function renderWhyPanel(content, pack) {
  if (!pack) {
    content.replaceChildren(h('p', { class: 'note' },
      'No model was asked for the last answer: it came from a skill, so there is no context pack to show.'));
    return;
  }
  const layers = Object.entries(pack.layers ?? {});
  const filled = layers.filter(([, entries]) => entries.length);
  const empty = layers.filter(([, entries]) => !entries.length).map(([name]) => name);
  const dropped = pack.compressionMetadata?.dropped ?? [];
  content.replaceChildren(
    h('p', {}, `The last answer was made from ${count(filled.reduce((n, [, e]) => n + e.length, 0), 'entry', 'entries')}, `
      + `${pack.budgetUsed} of ${pack.budgetLimit} tokens.`),
    ...filled.flatMap(([name, entries]) => layer(name, entries)),
    empty.length ? h('p', { class: 'note' }, `Empty layers: ${empty.join(', ')}.`) : null,
    h('h4', {}, 'Left out'),
    dropped.length
      ? h('ul', { class: 'dropped' }, dropped.map(droppedItem))
      : h('p', { class: 'note' }, 'Nothing was left out.'),
  );
}

function layer(name, entries) {
  const title = LAYERS[name] ? `${name}, ${LAYERS[name]}` : `${name} (extension)`;
  return [
    h('h4', {}, `${title} (${entries.length})`),
    h('ul', { class: 'layer' }, entries.map((entry) => h('li', {},
      h('span', { class: 'kind' }, `${entry.role ?? entry.kind}${entry.compressed ? ', shortened' : ''}: `),
      clip(entry.content, 160),
      entry.sources?.length ? h('div', { class: 'source' }, `from ${entry.sources.join(', ')}`) : null))),
  ];
}

function droppedItem(item) {
  const span = item.first === item.last ? item.first : `${item.first} … ${item.last}`;
  return h('li', {},
    `${count(item.count ?? 1, item.kind, `${item.kind}s`)}: ${REASONS[item.reason] ?? item.reason}`,
    h('div', { class: 'source' }, span));
}

function count(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}
