// agrun's in-page model provider on wllama (llama.cpp compiled to WebAssembly).
//
// wllama 3 runs llama-server's own request handling inside the wasm, so a chat completion
// with OpenAI-style tools goes through the GGUF's Jinja chat template and llama.cpp's
// tool-call parser, exactly as it does against a native llama-server.

const abortError = () => new DOMException('The model call was aborted', 'AbortError');

// Settle with `promise`, or reject with an AbortError as soon as `signal` aborts.
function abortable(promise, signal) {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortError());
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

// wllama runs llama.cpp in a worker it makes from a blob: URL. A page whose Content Security
// Policy refuses such workers (worker-src, or the script-src it falls back to, without blob:)
// gets an error event wllama does not hear, and the load would wait forever; the page's own
// violation event says so. `refused` rejects then; `stop` ends the watch.
function watchWorkerRefusal() {
  const page = globalThis.document;
  let stop = () => {};
  const refused = new Promise((_, reject) => {
    if (!page) return;
    const onViolation = (event) => {
      if (event.blockedURI !== 'blob' || event.disposition !== 'enforce') return;
      if (!/^(?:worker|child|script|default)-src/.test(event.effectiveDirective)) return;
      reject(new Error(
        `the page's Content Security Policy (${event.effectiveDirective}) refuses the worker the in-page model runs in: allow blob: in worker-src`,
      ));
    };
    page.addEventListener('securitypolicyviolation', onViolation);
    stop = () => page.removeEventListener('securitypolicyviolation', onViolation);
  });
  refused.catch(() => {});
  return { refused, stop: () => stop() };
}

// wllama's worker reports llama.cpp's runtime aborting as it starts (its wasm missing or
// damaged: an error page, a cut download) only as the log line Emscripten writes,
// "Aborted(...)", and the load waiting on the worker never settles. The logger wllama is
// given (console's, without debug lines) watches for that line; `crashed` rejects on it.
function crashWatch(wasmUrl) {
  let fail;
  const crashed = new Promise((_, reject) => {
    fail = reject;
  });
  crashed.catch(() => {});
  const watched = (level) => (...args) => {
    const line = args.map(String).join(' ');
    if (line.startsWith('Aborted(')) {
      fail(new Error(`the in-page model's runtime stopped as it started (${wasmUrl} missing or damaged?): ${line}`));
    }
    console[level](...args);
  };
  const logger = { debug() {}, log: watched('log'), warn: watched('warn'), error: watched('error') };
  return { crashed, logger };
}

function folderUrl(url) {
  const resolved = new URL(String(url), globalThis.location?.href);
  if (!resolved.pathname.endsWith('/')) resolved.pathname += '/';
  return resolved;
}

// Loads a GGUF into wllama once, on first use; a failed load is tried again on the next one.
// `forget` drops a loaded module that a failed call may have left unusable.
function wllamaLoader(modelUrl, wllamaUrl, loadParams) {
  const base = folderUrl(wllamaUrl);
  let loading = null;

  function load() {
    loading ??= (async () => {
      const { Wllama } = await import(new URL('index.js', base).href);
      const wasmUrl = new URL('wasm/wllama.wasm', base).href;
      const crash = crashWatch(wasmUrl);
      const wllama = new Wllama({ default: wasmUrl }, { logger: crash.logger });
      // The default compat resources (for browsers without JSPI or Memory64) are on a CDN.
      wllama.setCompat(null);
      const response = await fetch(new URL(String(modelUrl), globalThis.location?.href));
      if (!response.ok) throw new Error(`could not fetch the model ${modelUrl}: HTTP ${response.status}`);
      const model = await response.blob();
      const watch = watchWorkerRefusal();
      try {
        await Promise.race([
          wllama.loadModel([model], { n_gpu_layers: 0, ...loadParams }),
          watch.refused,
          crash.crashed,
        ]);
        // wllama resolves even when llama.cpp failed to load the file; its reply says so.
        if (!wllama.getLoadedContextInfo().success) {
          throw new Error(`llama.cpp could not load the model ${modelUrl}`);
        }
      } catch (error) {
        // Not awaited: a worker that never started does not answer the exit either.
        wllama.exit().catch(() => {});
        throw error;
      } finally {
        watch.stop();
      }
      return wllama;
    })();
    loading.catch(() => {
      loading = null;
    });
    return loading;
  }

  function forget(wllama) {
    loading = null;
    wllama.exit().catch(() => {});
  }

  return { load, forget };
}

/**
 * Make a provider that runs a GGUF model in the page. Nothing is fetched until the first call:
 * then wllama's module and wasm come from `wllamaUrl` and the model from `modelUrl`.
 */
export function createWllamaProvider({
  modelUrl,
  wllamaUrl = new URL('../wllama/', import.meta.url),
  nThreads = 1,
  nCtx = 2048,
  ...loadOptions
} = {}) {
  if (!modelUrl) throw new TypeError('createWllamaProvider needs a modelUrl');
  const { load, forget } = wllamaLoader(modelUrl, wllamaUrl, {
    n_threads: nThreads,
    n_ctx: nCtx,
    jinja: true,
    ...loadOptions,
  });

  return async function provider(request, { signal, onToken } = {}) {
    if (signal?.aborted) throw abortError();
    const wllama = await abortable(load(), signal);

    let text = '';
    let finishReason = 'stop';
    let usage = { promptTokens: 0, completionTokens: 0 };
    const calls = [];

    const onData = (chunk) => {
      // wllama may hand over more chunks of a batch after the abort.
      if (signal?.aborted) return;
      if (chunk.usage) {
        usage = {
          promptTokens: chunk.usage.prompt_tokens ?? 0,
          completionTokens: chunk.usage.completion_tokens ?? 0,
        };
      }
      for (const choice of chunk.choices ?? []) {
        const delta = choice.delta ?? {};
        if (delta.content) {
          text += delta.content;
          onToken?.(delta.content);
        }
        for (const part of delta.tool_calls ?? []) {
          const call = (calls[part.index ?? calls.length] ??= { id: '', name: '', arguments: '' });
          if (part.id) call.id = part.id;
          if (part.function?.name) call.name += part.function.name;
          if (part.function?.arguments) call.arguments += part.function.arguments;
        }
        if (choice.finish_reason) finishReason = choice.finish_reason;
      }
    };

    const run = wllama.createChatCompletion({
      messages: request.messages,
      tools: request.tools?.length ? request.tools : undefined,
      max_tokens: request.maxTokens,
      temperature: request.temperature,
      stop: request.stop,
      response_format: request.responseFormat,
      stream: true,
      stream_options: { include_usage: true },
      onData,
      abortSignal: signal,
    });
    // On abort the call rejects at once; wllama's own rejection comes later and is dropped.
    run.catch(() => {});
    try {
      await abortable(run, signal);
    } catch (error) {
      // A call that failed inside llama.cpp's wasm (a reply its tool-call parser could not
      // read ends this way) can leave the module unusable: the next call loads it afresh.
      if (!signal?.aborted) forget(wllama);
      throw error;
    }

    const toolCalls = calls.filter(Boolean).map((call, i) => ({
      id: call.id || `call_${i}`,
      name: call.name,
      arguments: call.arguments || '{}',
    }));
    if (finishReason !== 'length') finishReason = toolCalls.length > 0 ? 'tool_calls' : 'stop';
    return { text, toolCalls, usage, finishReason };
  };
}

/**
 * Make an embedder (createRuntime's `embedder`) that runs a GGUF sentence-embedding model in
 * the page, e.g. the MiniLM model agrun's tests use: `(texts) => Promise<number[][]>`, one
 * mean-pooled, L2-normalized vector per text. Nothing is fetched until the first call.
 * A text longer than the context is cut to its first `maxChars` characters: an embedding
 * model reads a sentence or a paragraph, not a document.
 */
export function createWllamaEmbedder({
  modelUrl,
  wllamaUrl = new URL('../wllama/', import.meta.url),
  nThreads = 1,
  nCtx = 512,
  maxChars = 1000,
  ...loadOptions
} = {}) {
  if (!modelUrl) throw new TypeError('createWllamaEmbedder needs a modelUrl');
  const { load, forget } = wllamaLoader(modelUrl, wllamaUrl, {
    n_threads: nThreads,
    n_ctx: nCtx,
    n_batch: nCtx,
    n_ubatch: nCtx,
    embeddings: true,
    pooling_type: 'mean',
    ...loadOptions,
  });

  return async function embed(texts) {
    const wllama = await load();
    try {
      const reply = await wllama.createEmbedding({ input: texts.map((text) => String(text).slice(0, maxChars)) });
      const vectors = [];
      for (const item of reply.data) vectors[item.index] = item.embedding;
      return vectors;
    } catch (error) {
      forget(wllama);
      throw error;
    }
  };
}
