// The settings panel: where answers come from. No model (skills, echo), the in-page model
// (wllama), a local OpenAI-compatible server, or a hosted API whose key the person types in:
// the key goes to apply() and the field is emptied; the panel never keeps it.
import { h } from './dom.js';
import { WORDS } from './words.js';

const CHOICES = ['page', 'none', 'in-page', 'local', 'hosted'];

/**
 * Fill `content` with the settings form for `settings` ({ kind, modelUrl, localUrl,
 * localModel, hostedUrl, hostedModel }); `pageProvider` says whether the page set its own
 * provider function, `keyHeld` whether a hosted API key is held in memory. On submit,
 * `apply(settings, apiKey)` is awaited; it returns the text to announce. The labels come from
 * the words.js table `words`.
 */
export function renderSettingsPanel(content, settings, { pageProvider, keyHeld, apply, words = WORDS }) {
  const choices = CHOICES.filter((kind) => kind !== 'page' || pageProvider);
  const field = (name, label, attributes = {}) => h('div', { class: 'field' },
    h('label', { for: `setting-${name}` }, label),
    h('input', { id: `setting-${name}`, name, value: settings[name] ?? '', autocomplete: 'off', ...attributes }));
  const group = (kind, ...fields) => h('div', { 'data-for': kind, hidden: settings.kind !== kind }, ...fields);
  const status = h('p', { id: 'settings-status', role: 'status', class: 'note' });
  const form = h('form', { id: 'settings-form', novalidate: true },
    h('fieldset', {}, h('legend', {}, words.answersFrom),
      choices.map((kind) => h('div', { class: 'choice' },
        h('input', { type: 'radio', name: 'kind', id: `provider-${kind}`, value: kind, checked: settings.kind === kind }),
        h('label', { for: `provider-${kind}` }, words.choices[kind])))),
    group('in-page', field('modelUrl', words.modelFileUrl, { type: 'text', placeholder: 'models/model.gguf' })),
    group('local',
      field('localUrl', words.serverUrl, { type: 'url', placeholder: 'http://127.0.0.1:8080/v1' }),
      field('localModel', words.modelNameOptional, { type: 'text' })),
    group('hosted',
      field('hostedUrl', words.apiUrl, { type: 'url', placeholder: 'https://api.example.com/v1' }),
      field('hostedModel', words.modelName, { type: 'text' }),
      h('div', { class: 'field' },
        h('label', { for: 'setting-apiKey' }, words.apiKey),
        h('input', {
          id: 'setting-apiKey', type: 'password', autocomplete: 'off', spellcheck: 'false',
          placeholder: keyHeld ? words.keyHeld : '', 'aria-describedby': 'key-note',
        }),
        h('p', { id: 'key-note', class: 'note' }, words.keyNote))),
    h('button', { type: 'submit', id: 'settings-apply', class: 'primary' }, words.apply),
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
    const problem = check(next, apiKey || keyHeld, words);
    if (problem) {
      status.textContent = problem;
      return;
    }
    status.textContent = words.applying;
    status.textContent = await apply(next, apiKey);
  });
  content.replaceChildren(form);
}

// What is missing or wrong in the settings, or '' when they can be applied.
function check({ kind, modelUrl, localUrl, hostedUrl }, haveKey, words) {
  const web = (url) => /^https?:\/\/\S+$/.test(url);
  if (kind === 'in-page' && !modelUrl) return words.giveModelUrl;
  if (kind === 'local' && !web(localUrl)) return words.giveServerUrl;
  if (kind === 'hosted' && !web(hostedUrl)) return words.giveApiUrl;
  if (kind === 'hosted' && !haveKey) return words.giveKey;
  return '';
}
