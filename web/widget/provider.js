// From the settings a person chose to the `provider` option of createRuntime.

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
 * in-page model, made once per model URL and kept in `cache`), or an OpenAI-compatible
 * server's description; `apiKey` goes only into the hosted one.
 */
export async function resolveProvider(settings, { pageProvider, apiKey, cache }) {
  switch (settings.kind) {
    case 'page':
      return pageProvider ?? undefined;
    case 'in-page': {
      if (!cache.has(settings.modelUrl)) {
        const { createWllamaProvider } = await import(WLLAMA_URL);
        cache.set(settings.modelUrl, createWllamaProvider({ modelUrl: settings.modelUrl }));
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
