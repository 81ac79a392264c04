// The in-page model's GGUF file: downloaded once with progress into Cache Storage, checked to
// be a GGUF file, and handed to wllama as a blob: URL, so a second visit (or a runtime made
// again) reads it from the cache instead of downloading it again.

import { WORDS } from './words.js';

const CACHE = 'agrun-chat-models';
const MAGIC = 'GGUF';

/** A model file that cannot be used; its message says which URL and why. */
export class ModelFileError extends Error {
  name = 'ModelFileError';
}

/**
 * The file at `url` as a blob: URL, from Cache Storage or downloaded into it.
 * @param {string} url
 * @param {{ onProgress?: (event: { loaded: number, total: number }) => void, words?: object }} [options]
 *   `words`: the words.js table the errors' messages come from
 * @returns {Promise<string>}
 * @throws {ModelFileError} the URL has no file, or not a GGUF one
 */
export async function loadModelFile(url, { onProgress, words = WORDS } = {}) {
  const href = new URL(url, document.baseURI).href;
  const cache = await openCache();
  const cached = await (await cache?.match(href))?.blob();
  const blob = cached ?? await download(href, onProgress, words);
  if (cached) onProgress?.({ loaded: blob.size, total: blob.size });
  await checkGguf(blob, url, words);
  // Not cached (private mode, quota): this visit still has the file.
  if (!cached) await cache?.put(href, new Response(blob)).catch(() => {});
  return URL.createObjectURL(blob);
}

async function openCache() {
  try {
    return await globalThis.caches?.open(CACHE);
  } catch {
    return null; // Cache Storage refused (an opaque origin): download each time
  }
}

async function download(href, onProgress, words) {
  let response;
  try {
    response = await fetch(href);
  } catch (error) {
    throw new ModelFileError(words.modelUnreachable(href, error.message));
  }
  if (!response.ok) throw new ModelFileError(words.noModelFile(href, response.status));
  const total = Number(response.headers.get('content-length')) || 0;
  const reader = response.body.getReader();
  const chunks = [];
  let loaded = 0;
  onProgress?.({ loaded, total });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    onProgress?.({ loaded, total: Math.max(total, loaded) });
  }
  return new Blob(chunks);
}

async function checkGguf(blob, url, words) {
  const head = new TextDecoder().decode(await blob.slice(0, MAGIC.length).arrayBuffer());
  if (head !== MAGIC) throw new ModelFileError(words.notGguf(url, head.replace(/[^\x20-\x7e]/g, '?')));
}
