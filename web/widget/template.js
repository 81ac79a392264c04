// The widget's shell: rendered at once, before agrun.js has loaded, so the progress bar
// paints with the first frame. The ids are the shadow root's own (two widgets never clash).
// Its words come from a table of words.js; none of them holds markup.

const PANELS = [
  { name: 'chats', label: 'chats', title: 'chatsTitle' },
  { name: 'memory', label: 'memory', title: 'memory' },
  { name: 'why', label: 'why', title: 'whyTitle' },
  { name: 'settings', label: 'settings', title: 'settingsTitle' },
];

const escape = (text) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The shell's markup in the words of `words` (a words.js table), laid out `dir`. */
export function shell(words, dir) {
  const w = (key) => escape(words[key]);
  const panel = ({ name, title }) => `
  <section id="${name}-panel" class="panel" part="panel ${name}-panel" aria-labelledby="${name}-heading" hidden>
    <div class="panel-top">
      <h3 id="${name}-heading" class="panel-heading" tabindex="-1">${w(title)}</h3>
      <button type="button" class="close" data-close="${name}" aria-label="${escape(words.closePanel(words[title]))}">${w('close')}</button>
    </div>
    <div id="${name}-content"></div>
  </section>`;
  const toggle = ({ name, label }) => `
  <button type="button" id="${name}-toggle" part="toolbar-button" data-panel="${name}"
    aria-expanded="false" aria-controls="${name}-panel">${w(label)}</button>`;
  const loading = escape(words.stages.script);
  return `
<div class="frame" part="container"${dir ? ` dir="${dir}"` : ''}>
  <div class="chat">
    <div class="header" part="header">
      <div class="heading">
        <h2 id="title" class="title" part="title">agrun</h2>
        <p id="status" class="status" part="status" role="status">${w('loading')}</p>
      </div>
      <div class="tools" part="toolbar" role="group" aria-label="${w('panels')}">${PANELS.map(toggle).join('')}</div>
    </div>
    <div id="boot" class="boot" part="progress">
      <div id="bar" class="bar" part="progress-bar" role="progressbar" aria-label="${loading}"
        aria-valuemin="0" aria-valuemax="100" aria-valuenow="0" aria-valuetext="${loading}">
        <div class="fill"></div>
      </div>
    </div>
    <div id="banner" class="banner" part="banner" role="alert" hidden></div>
    <p id="announce" class="visually-hidden" role="status"></p>
    <div id="body" class="body">
      <div class="conversation">
        <div id="transcript" class="transcript" part="transcript" role="log" aria-live="polite"
          aria-label="${w('conversation')}" tabindex="0"><div id="empty" class="empty-state" part="empty-state" hidden></div><ol id="messages"></ol></div>
        <form id="chat" class="composer" part="composer">
          <label for="input" class="visually-hidden">${w('message')}</label>
          <textarea id="input" part="input" rows="2" placeholder="${w('placeholder')}" autocomplete="off"
            aria-describedby="hint"></textarea>
          <button id="send" class="primary" part="send" type="submit" disabled>${w('send')}</button>
          <button id="stop" part="stop" type="button" hidden>${w('stop')}</button>
        </form>
        <p id="editing" class="hint editing" hidden></p>
        <p id="hint" class="hint">${w('hint')}</p>
      </div>
      ${PANELS.map(panel).join('')}
    </div>
  </div>
</div>`;
}
