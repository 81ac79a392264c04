/** An OpenAI-style chat message, as agrun sends it to a provider. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  name?: string;
}

/** An OpenAI-style tool definition. */
export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export interface ProviderRequest {
  messages: ChatMessage[];
  tools?: ChatTool[];
  model?: string;
  maxTokens?: number;
  temperature?: number;
  stop?: string[];
  responseFormat?: { type: 'json_schema'; json_schema: { name: string; schema: unknown } };
}

export interface ProviderResult {
  /** The reply's text; '' when the reply is only tool calls. */
  text: string;
  /** `arguments` is a JSON string. */
  toolCalls: { id: string; name: string; arguments: string }[];
  usage: { promptTokens: number; completionTokens: number };
  finishReason: 'stop' | 'length' | 'tool_calls';
}

export interface ProviderCallOptions {
  /** Aborting it stops generation; the call rejects with an 'AbortError' DOMException. */
  signal?: AbortSignal;
  /** Called with each streamed piece of text (never with tool-call markup). */
  onToken?: (delta: string) => void;
}

export type Provider = (
  request: ProviderRequest,
  options?: ProviderCallOptions,
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
export function createWllamaProvider(options: WllamaProviderOptions): Provider;
