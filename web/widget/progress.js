// Boot progress as one bar: createRuntime's onProgress stages, each given a share of the
// bar by how long it takes (starting Python is most of a cold boot); the labels are the
// words.js table's `stages`.
import { WORDS } from './words.js';

const STAGES = {
  script: { from: 0, to: 5 },
  pyodide: { from: 5, to: 60 },
  packages: { from: 60, to: 92 },
  runtime: { from: 92, to: 100 },
};

/**
 * Where the bar stands for one onProgress event `{ stage, loaded, total }`: `{ percent, label }`,
 * percent a whole number 0-100, label in the words of `words`. An unknown stage keeps the bar
 * where `previous` had it.
 */
export function bootProgress({ stage, loaded = 0, total = 1 }, previous = 0, words = WORDS) {
  const share = STAGES[stage];
  if (!share) return { percent: previous, label: words.stages.script };
  const done = total > 0 ? Math.min(1, Math.max(0, loaded / total)) : 1;
  const percent = Math.round(share.from + (share.to - share.from) * done);
  const count = stage === 'packages' && total > 1 ? ` (${words.ofCount(loaded, total)})` : '';
  // The bar never moves back: a runtime made again on a booted page restarts at 'pyodide'.
  return { percent: Math.max(previous, percent), label: `${words.stages[stage]}${count}…` };
}
