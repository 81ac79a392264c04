// Types of agrun's in-page model provider on wllama (web/providers/wllama.js). The provider
// protocol itself (request, options, reply) is agrun's own, declared in ../agrun.d.ts.
import type {
  ProviderRequest as AgrunProviderRequest,
  ChatMessage,
  ChatTool,
  FinishReason,
  ProviderCallOptions,
} from '../agrun';

export type { ChatMessage, ChatTool, ProviderCallOptions };

/** What this provider takes: agrun's provider request, whose `tools` may be left out here. */
export type ProviderRequest = Omit<AgrunProviderRequest, 'tools'> & { tools?: ChatTool[] };

/** What this provider resolves to: always the text, the tool calls, usage and a reason. */
export interface ProviderResult {
  /** The reply's text; '' when the reply is only tool calls. */
  text: string;
  /** `arguments` is a JSON string. */
  toolCalls: { id: string; name: string; arguments: string }[];
  usage: { promptTokens: number; completionTokens: number };
  finishReason: Extract<FinishReason, 'stop' | 'length' | 'tool_calls'>;
}

/**
 * A provider function (createRuntime's `provider`). Aborting `signal` stops generation and
 * rejects with an 'AbortError' DOMException; `onToken` hears each streamed piece of text.
 */
export type Provider = (
  request: ProviderRequest,
  options?: Partial<ProviderCallOptions>,
) => Promise<ProviderResult>;

export interface WllamaProviderOptions {
  /** The GGUF file, fetched from the page's own site on the first call. */
  modelUrl: string | URL;
  /** The folder holding wllama's index.js and wasm/wllama.wasm; default: ../wllama/ beside this module. */
  wllamaUrl?: string | URL;
  /** Default 1: more threads need cross-origin isolation and were slower here. */
  nThreads?: number;
  /** Context length in tokens; default 2048. */
  nCtx?: number;
  /** Any other wllama LoadModelParams (snake_case), passed through to loadModel. */
  [loadOption: string]: unknown;
}

/** A provider that runs a GGUF model in the page with wllama; loads lazily on the first call. */
export declare function createWllamaProvider(options: WllamaProviderOptions): Provider;

export interface WllamaEmbedderOptions {
  /** The GGUF sentence-embedding model, fetched from the page's own site on the first call. */
  modelUrl: string | URL;
  /** The folder holding wllama's index.js and wasm/wllama.wasm; default: ../wllama/ beside this module. */
  wllamaUrl?: string | URL;
  /** Default 1. */
  nThreads?: number;
  /** Context (and batch) length in tokens; default 512. */
  nCtx?: number;
  /** A longer text is cut to this many characters first; default 1000. */
  maxChars?: number;
  /** Any other wllama LoadModelParams (snake_case), passed through to loadModel. */
  [loadOption: string]: unknown;
}

/** An embedder (createRuntime's `embedder`) that runs a GGUF embedding model in the page. */
export declare function createWllamaEmbedder(
  options: WllamaEmbedderOptions,
): (texts: string[]) => Promise<number[][]>;
