// What went wrong in a turn, sorted into the few kinds a person can act on. The widget words
// each kind; a page that binds createChat() to its own view does the same with `kind`, and
// keeps `code` and `message` (the runtime's typed error) for the details.

// A run's error code (or an AgrunError's) to its kind and whether sending again can help.
const KINDS = {
  provider_unavailable: ['unavailable', true],
  provider_timeout: ['timeout', true],
  provider_rate_limited: ['rate_limited', true],
  provider_stream_cut: ['cut', true],
  provider_error: ['model_failed', true],
  provider_protocol_error: ['bad_reply', false],
  provider_reply_too_long: ['too_long', false],
  context_building_failed: ['too_big', false],
  invalid_input: ['too_big', false],
  unknown_tool: ['tool_failed', true],
  invalid_tool_arguments: ['tool_failed', true],
  skill_error: ['skill_failed', true],
  skill_timeout: ['skill_failed', true],
  output_not_serializable: ['skill_failed', false],
  matcher_error: ['skill_failed', false],
  cycle_limit: ['gave_up', true],
  interpreter_failed: ['stopped_working', false],
  closed: ['stopped_working', false],
  storage_error: ['storage', true],
};

/**
 * @param {{ code?: string, message?: string }} error a RunError or an AgrunError
 * @returns {import('../agrun').ChatError}
 */
export function describeChatError(error) {
  const code = String(error?.code ?? 'internal_error');
  const message = String(error?.message ?? error ?? 'unknown error');
  let [kind, retryable] = KINDS[code] ?? ['other', true];
  if (code === 'provider_http_error') {
    // A 4xx: the request itself was refused, so sending it again unchanged cannot help.
    const status = Number(/HTTP (\d{3})/.exec(message)?.[1] ?? 400);
    kind = status === 401 || status === 403 ? 'auth' : status === 404 ? 'not_found' : 'refused';
    retryable = false;
  }
  // llama.cpp's server answers 500 when it cannot parse what its own model wrote (a tool
  // call, say): the same request gets the same reply.
  if (code === 'provider_unavailable' && /\bpars(e|ing)\b/i.test(message)) [kind, retryable] = ['bad_reply', false];
  return { kind, code, message, retryable };
}
