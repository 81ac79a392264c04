// The "why" panel: from the toolbar, the context pack the last model call was sent
// (rt.lastPack()), layer by layer; from an answer's Why button, that answer's run trace
// (rt.why(runId)) in a person's words, with the ids, layers and tokens in a closed section.
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

function count(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * Fill `content` with why one answer was given: `state` is { reading: true }, { trace, answer }
 * (rt.why()'s RunTrace and the answer's text), or { error } (code 'trace_not_found' when it
 * is no longer kept).
 */
export function renderRunWhy(content, state, w = WORDS) {
  const words = w.answerWhy;
  if (state.reading) {
    content.replaceChildren(h('p', { class: 'note' }, words.reading));
    return;
  }
  if (state.error) {
    content.replaceChildren(state.error.code === 'trace_not_found'
      ? h('p', { class: 'note why-missing' }, words.evicted)
      : h('p', { class: 'note' }, `${words.failed} ${state.error.message}`));
    return;
  }
  const { trace } = state;
  const at = trace.attribution?.call ?? trace.calls.length - 1;
  const call = trace.calls[at];
  if (!call) {
    content.replaceChildren(h('p', { class: 'note' }, words.noModel));
    return;
  }
  const marks = new Map((trace.attribution?.entries ?? []).map((mark) => [mark.id, mark]));
  const used = call.entries.filter((entry) => marks.get(entry.id)?.used);
  const unused = call.entries.filter((entry) => !marks.get(entry.id)?.used);
  const { dropped } = call; // what was merged into L3 is among it, with reason moved_to_l3
  content.replaceChildren(...[
    state.answer ? h('p', { class: 'why-about' }, `${words.about} “${clip(state.answer, 90)}”`) : null,
    trace.calls.length > 1 ? h('p', {}, words.calls(trace.calls.length)) : null,
    h('p', { class: 'why-used' }, h('strong', {}, `${words.used}: `),
      used.length ? `${tally(used, words)}.` : words.nothingUsed),
    unused.length ? h('p', { class: 'why-unused' }, h('strong', {}, `${words.alsoSeen}: `), `${tally(unused, words)}.`) : null,
    h('p', { class: 'why-left-out' }, h('strong', {}, `${words.leftOut}: `),
      dropped.length ? `${leftOut(dropped, words)}.` : words.nothingLeftOut),
    traceDetails(trace, call, marks, words),
  ].filter(Boolean));
}

// "3 messages from the conversation, 1 remembered note": counts by kind, in pack order.
function tally(entries, words) {
  const counts = new Map();
  for (const entry of entries) counts.set(entry.kind, (counts.get(entry.kind) ?? 0) + 1);
  return [...counts].map(([kind, n]) => kindCount(kind, n, words)).join(', ');
}

function kindCount(kind, n, words) {
  const [one, many] = words.kinds[kind] ?? words.other;
  return count(n, one, many);
}

// "12 messages from the conversation to fit the budget": one phrase per reason and kind.
function leftOut(dropped, words) {
  const groups = new Map();
  for (const item of dropped) {
    const key = `${item.kind}|${item.reason}`;
    groups.set(key, (groups.get(key) ?? 0) + (item.count ?? 1));
  }
  return [...groups].map(([key, n]) => {
    const [kind, reason] = key.split('|');
    return `${kindCount(kind, n, words)} ${words.reasons[reason] ?? `(${reason})`}`;
  }).join('; ');
}

// The ids, layers and tokens, for a person who asks: a <details>, closed.
function traceDetails(trace, call, marks, words) {
  const facts = [
    `${words.run} ${trace.runId}`,
    words.tokens(call.budgetUsed, call.budgetLimit),
    call.usage ? words.usage(call.usage) : null,
    words.factor(call.factor),
  ].filter(Boolean).join(' · ');
  return h('details', { class: 'why-details', part: 'why-details' },
    h('summary', {}, words.details),
    h('p', { class: 'source' }, facts),
    h('h4', {}, words.entriesHeading),
    h('ul', { class: 'why-entries' }, call.entries.map((entry) => h('li', { 'data-entry': entry.id },
      h('code', {}, entry.id),
      ` ${entry.layer} · ${entry.kind} · ${entry.tokens} tokens${entry.compressed ? ` · ${words.shortened}` : ''}`
        + ` · ${marks.get(entry.id)?.used ? words.yes : words.no}`,
      entry.sources.length ? h('div', { class: 'source' }, entry.sources.join(', ')) : null))),
    call.dropped.length || call.movedToL3.length ? h('h4', {}, words.droppedHeading) : null,
    call.dropped.length || call.movedToL3.length
      ? h('ul', { class: 'why-dropped' },
        call.dropped.map((item) => h('li', {}, `${item.kind} · ${item.reason} · ${item.count}: `,
          h('code', {}, item.first === item.last ? item.first : `${item.first} … ${item.last}`))),
        call.movedToL3.map((id) => h('li', {}, 'moved_to_l3: ', h('code', {}, id))))
      : null);
}
