// The settings panel: where answers come from. No model (skills, echo), the in-page model
// (wllama), a local OpenAI-compatible server, or a hosted API whose key the person types in:
// the key goes to apply() and the field is emptied; the panel never keeps it.
import { h } from './dom.js';

const CHOICES = [
  ['page', "This page's own model"],
  ['none', 'No model: skills only (echo)'],
  ['in-page', 'A model running in this page'],
  ['local', 'A local server (OpenAI-compatible)'],
  ['hosted', 'A hosted API'],
];

/**
 * Fill `content` with the settings form for `settings` ({ kind, modelUrl, localUrl,
 * localModel, hostedUrl, hostedModel }); `pageProvider` says whether the page set its own
 * provider function, `keyHeld` whether a hosted API key is held in memory. On submit,
 * `apply(settings, apiKey)` is awaited; it returns the text to announce.
 */
export function renderSettingsPanel(content, settings, { pageProvider, keyHeld, apply }) {
  const choices = CHOICES.filter(([kind]) => kind !== 'page' || pageProvider);
  const field = (name, label, attributes = {}) => h('div', { class: 'field' },
    h('label', { for: `setting-${name}` }, label),
    h('input', { id: `setting-${name}`, name, value: settings[name] ?? '', autocomplete: 'off', ...attributes }));
  const group = (kind, ...fields) => h('div', { 'data-for': kind, hidden: settings.kind !== kind }, ...fields);
  const status = h('p', { id: 'settings-status', role: 'status', class: 'note' });
  const form = h('form', { id: 'settings-form', novalidate: true },
    h('fieldset', {}, h('legend', {}, 'Answers come from'),
      choices.map(([kind, label]) => h('div', { class: 'choice' },
        h('input', { type: 'radio', name: 'kind', id: `provider-${kind}`, value: kind, checked: settings.kind === kind }),
        h('label', { for: `provider-${kind}` }, label)))),
    group('in-page', field('modelUrl', 'Model file (GGUF) URL', { type: 'text', placeholder: 'models/model.gguf' })),
    group('local',
      field('localUrl', 'Server URL', { type: 'url', placeholder: 'http://127.0.0.1:8080/v1' }),
      field('localModel', 'Model name (optional)', { type: 'text' })),
    group('hosted',
      field('hostedUrl', 'API URL', { type: 'url', placeholder: 'https://api.example.com/v1' }),
      field('hostedModel', 'Model name', { type: 'text' }),
      h('div', { class: 'field' },
        h('label', { for: 'setting-apiKey' }, 'API key'),
        h('input', {
          id: 'setting-apiKey', type: 'password', autocomplete: 'off', spellcheck: 'false',
          placeholder: keyHeld ? 'A key is set (kept in memory only)' : '', 'aria-describedby': 'key-note',
        }),
        h('p', { id: 'key-note', class: 'note' },
          'The key is kept in this page’s memory only: it is never stored, so a reload asks for it again.'))),
    h('button', { type: 'submit', id: 'settings-apply', class: 'primary' }, 'Apply'),
    status);

  form.addEventListener('change', (event) => {
    if (event.target.name !== 'kind') return;
    for (const box of form.querySelectorAll('[data-for]')) box.hidden = box.dataset.for !== event.target.value;
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const key = form.querySelector('#setting-apiKey');
    const apiKey = key.value;
    key.value = '';
    const next = { ...settings, kind: data.get('kind') };
    for (const name of ['modelUrl', 'localUrl', 'localModel', 'hostedUrl', 'hostedModel']) next[name] = String(data.get(name) ?? '').trim();
    const problem = check(next, apiKey || keyHeld);
    if (problem) {
      status.textContent = problem;
      return;
    }
    status.textContent = 'Applying…';
    status.textContent = await apply(next, apiKey);
  });
  content.replaceChildren(form);
}

// What is missing or wrong in the settings, or '' when they can be applied.
function check({ kind, modelUrl, localUrl, hostedUrl }, haveKey) {
  const web = (url) => /^https?:\/\/\S+$/.test(url);
  if (kind === 'in-page' && !modelUrl) return 'Give the URL of the model file.';
  if (kind === 'local' && !web(localUrl)) return 'Give the server URL, starting with http:// or https://.';
  if (kind === 'hosted' && !web(hostedUrl)) return 'Give the API URL, starting with https://.';
  if (kind === 'hosted' && !haveKey) return 'Give the API key.';
  return '';
}
