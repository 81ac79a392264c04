// The demo chat page: a text box, a send button and the transcript, on top of createRuntime.
import { createRuntime } from './agrun.js';

const status = document.getElementById('status');
const transcript = document.getElementById('transcript');
const form = document.getElementById('chat');
const input = document.getElementById('input');
const send = document.getElementById('send');

function say(role, text) {
  const item = document.createElement('li');
  item.className = role;
  item.textContent = text;
  transcript.append(item);
  return item;
}

const runtime = await createRuntime({
  onProgress: ({ stage, loaded, total }) => {
    status.textContent = `Loading ${stage} (${loaded}/${total})…`;
  },
}).catch((error) => {
  status.textContent = `agrun could not start: ${error.message}`;
  throw error;
});

// A reload resumes the session: show what was said before.
for (const message of runtime.history()) {
  say(message.role === 'user' ? 'user' : 'agent', message.content);
}
status.textContent = 'Ready';
input.disabled = false;
send.disabled = false;
input.focus();

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const text = input.value;
  if (!text.trim()) return;
  input.value = '';
  say('user', text);
  send.disabled = true;
  try {
    const result = await runtime.run(text);
    say('agent', typeof result.output === 'string' ? result.output : JSON.stringify(result.output));
  } catch (error) {
    say('error', error.message);
    input.value = text; // a failed turn gives the person their words back
  } finally {
    send.disabled = false;
    input.focus();
  }
});
