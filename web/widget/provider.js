// From the settings a person chose to the `provider` option of createRuntime.

import { loadModelFile } from './model-file.js';
import { WORDS } from './words.js';

const WLLAMA_URL = new URL('../providers/wllama.js', import.meta.url).href;

/** Settings from the element's attributes, before the person changed any. */
export function initialSettings(element) {
  const kind = element.getAttribute('provider-kind') ?? 'none';
  const baseUrl = element.getAttribute('base-url') ?? '';
  const model = element.getAttribute('model') ?? '';
  return {
    kind,
    modelUrl: element.getAttribute('model-url') ?? '',
    localUrl: kind === 'hosted' ? '' : baseUrl,
    localModel: kind === 'hosted' ? '' : model,
    hostedUrl: kind === 'hosted' ? baseUrl : '',
    hostedModel: kind === 'hosted' ? model : '',
  };
}

/**
 * The provider for `settings`: undefined (skills only), a function (the page's own, or the
 * in-page model, made once per model URL and kept in `cache`, its file downloaded first with
 * `onModelProgress` and checked), or an OpenAI-compatible server's description; `apiKey`
 * goes only into the hosted one. Throws a message for a person when the model file is missing
 * or not a GGUF file; `words` is the words.js table its messages come from.
 */
export async function resolveProvider(settings, { pageProvider, apiKey, cache, onModelProgress, words = WORDS }) {
  switch (settings.kind) {
    case 'page':
      return pageProvider ?? undefined;
    case 'in-page': {
      if (!settings.modelUrl) throw new Error(words.needModelUrl);
      if (!cache.has(settings.modelUrl)) {
        const [{ createWllamaProvider }, file] = await Promise.all([
          import(WLLAMA_URL), loadModelFile(settings.modelUrl, { onProgress: onModelProgress, words }),
        ]);
        cache.set(settings.modelUrl, createWllamaProvider({ modelUrl: file }));
      }
      return cache.get(settings.modelUrl);
    }
    case 'local':
      return openai(settings.localUrl, settings.localModel);
    case 'hosted':
      return { ...openai(settings.hostedUrl, settings.hostedModel), ...(apiKey ? { apiKey } : {}) };
    default:
      return undefined;
  }
}

function openai(baseUrl, model) {
  return { kind: 'openai', baseUrl, ...(model ? { model } : {}) };
}

/** A few words (from the words.js table `words`) on where answers come from, for the status line. */
export function describeProvider(settings, words = WORDS) {
  const { sources } = words;
  if (settings.kind === 'local') return sources.local(settings.localUrl);
  if (settings.kind === 'hosted') return sources.hosted(settings.hostedUrl);
  return sources[settings.kind] ?? sources.none;
}

/**
 * Check that an OpenAI-compatible server answers at `baseUrl` (its `/models`, with the key
 * if one is given) before a turn needs it. Throws an Error whose message says what is wrong:
 * not a URL, nothing answering there, or the key refused. A server that answers but keeps
 * `/models` from this page (no CORS on it, or none at all) passes: the first turn will tell.
 * The messages come from the words.js table `words`.
 */
export async function checkServer(baseUrl, apiKey, words = WORDS) {
  if (!URL.canParse(baseUrl)) throw new Error(words.notUrl(baseUrl));
  const headers = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  const signal = () => AbortSignal.timeout(10_000);
  let response = null;
  try {
    response = await fetch(`${baseUrl.replace(/\/+$/, '')}/models`, { headers, signal: signal() });
  } catch {
    // Unreadable: either nothing is there or it keeps /models from other origins.
    try {
      await fetch(baseUrl, { mode: 'no-cors', signal: signal() });
    } catch {
      throw new Error(words.nothingAnswers(baseUrl));
    }
  }
  if (response?.status === 401 || response?.status === 403) {
    throw new Error((apiKey ? words.keyRefused : words.keyNeeded)(baseUrl, response.status));
  }
}
