// From the settings a person chose to the `provider` option of createRuntime.

import { loadModelFile } from './model-file.js';

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
 * or not a GGUF file.
 */
export async function resolveProvider(settings, { pageProvider, apiKey, cache, onModelProgress }) {
  switch (settings.kind) {
    case 'page':
      return pageProvider ?? undefined;
    case 'in-page': {
      if (!settings.modelUrl) throw new Error('the in-page model needs the URL of its GGUF file');
      if (!cache.has(settings.modelUrl)) {
        const [{ createWllamaProvider }, file] = await Promise.all([
          import(WLLAMA_URL), loadModelFile(settings.modelUrl, { onProgress: onModelProgress }),
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

/** A few words on where answers come from, for the status line. */
export function describeProvider(settings) {
  return {
    page: "the page's model",
    none: 'no model (skills only)',
    'in-page': 'the in-page model',
    local: `the server at ${settings.localUrl}`,
    hosted: `the API at ${settings.hostedUrl}`,
  }[settings.kind] ?? 'no model';
}

/**
 * Check that an OpenAI-compatible server answers at `baseUrl` (its `/models`, with the key
 * if one is given) before a turn needs it. Throws an Error whose message says what is wrong:
 * not a URL, nothing answering there, or the key refused. A server that answers but keeps
 * `/models` from this page (no CORS on it, or none at all) passes: the first turn will tell.
 */
export async function checkServer(baseUrl, apiKey) {
  if (!URL.canParse(baseUrl)) throw new Error(`“${baseUrl}” is not a URL: write it as http://host:port/v1`);
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
      throw new Error(`nothing answers at ${baseUrl}: is the server running, and is the address right?`);
    }
  }
  if (response?.status === 401 || response?.status === 403) {
    throw new Error(`the server at ${baseUrl} refused ${apiKey ? 'the API key' : 'to answer without an API key'} (HTTP ${response.status})`);
  }
}
