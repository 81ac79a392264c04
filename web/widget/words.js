// The words the conversation shows, in one table: a person's view of the chat controller's
// states, parts and error kinds (web/widget/chat-errors.js).

const EN = {
  edit: 'Edit',
  retry: 'Retry',
  copy: 'Copy',
  copyCode: 'Copy code',
  regenerate: 'Regenerate',
  details: 'Details',
  copied: 'Copied.',
  copyFailed: 'Could not copy: the browser refused the clipboard.',
  yourMessage: 'You said',
  answer: 'Answer',
  notSent: 'Not sent.',
  noAnswer: 'No answer:',
  stoppedBefore: 'Stopped before the answer.',
  stopped: 'Stopped: the answer is cut short.',
  failedAnswer: 'The answer broke off.',
  cannotRetry: 'Sending it again will not help.',
  editing: 'Editing your message: Enter sends it as a new message at the end; Escape cancels.',
  editCancelled: 'Editing cancelled.',
  busy: 'Wait for the answer, or stop it.',
  tool: 'Tool',
  toolRunning: 'running…',
  toolDone: 'done',
  toolFailed: 'failed',
  arguments: 'Arguments',
  result: 'Result',
  error: 'Error',
  retrieved: 'Read stored content',
  retrievedMissing: 'not found',
  question: 'agrun asks',
  errors: {
    unavailable: 'The model could not be reached.',
    timeout: 'The model took too long to answer.',
    rate_limited: 'The model is taking too many requests: try again in a moment.',
    cut: 'The connection to the model broke mid-answer.',
    model_failed: 'The model failed.',
    bad_reply: 'The model’s reply could not be read.',
    too_long: 'The answer grew longer than allowed.',
    too_big: 'That is more than this model can take in: shorten it.',
    auth: 'The model refused the key: check the API key in Settings.',
    not_found: 'The model or its address was not found: check Settings.',
    refused: 'The model refused the request.',
    tool_failed: 'A tool call went wrong.',
    skill_failed: 'A skill failed.',
    gave_up: 'agrun gave up after too many steps.',
    stopped_working: 'agrun stopped working: reload the page.',
    storage: 'The conversation could not be saved.',
    other: 'Something went wrong.',
  },
};

export const WORDS = EN;

/** A person's sentence for a chat error (its `kind`); details stay in `error.message`. */
export function errorSentence(error) {
  return WORDS.errors[error?.kind] ?? WORDS.errors.other;
}
