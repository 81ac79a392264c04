// The widget's shell: rendered at once, before agrun.js has loaded, so the progress bar
// paints with the first frame. The ids are the shadow root's own (two widgets never clash).

export const PANELS = [
  { name: 'memory', label: 'Memory', title: 'Memory' },
  { name: 'why', label: 'Why', title: 'Why this answer' },
  { name: 'settings', label: 'Settings', title: 'Model settings' },
];

const panel = ({ name, title }) => `
  <section id="${name}-panel" class="panel" part="panel ${name}-panel" aria-labelledby="${name}-heading" hidden>
    <div class="panel-top">
      <h3 id="${name}-heading" class="panel-heading" tabindex="-1">${title}</h3>
      <button type="button" class="close" data-close="${name}" aria-label="Close ${title.toLowerCase()}">Close</button>
    </div>
    <div id="${name}-content"></div>
  </section>`;

const toggle = ({ name, label }) => `
  <button type="button" id="${name}-toggle" part="toolbar-button" data-panel="${name}"
    aria-expanded="false" aria-controls="${name}-panel">${label}</button>`;

export const SHELL = `
<div class="frame" part="container">
  <div class="chat">
    <div class="header" part="header">
      <div class="heading">
        <h2 id="title" class="title" part="title">agrun</h2>
        <p id="status" class="status" part="status" role="status">Loading agrun…</p>
      </div>
      <div class="tools" part="toolbar" role="group" aria-label="Panels">${PANELS.map(toggle).join('')}</div>
    </div>
    <div id="boot" class="boot" part="progress">
      <div id="bar" class="bar" part="progress-bar" role="progressbar" aria-label="Loading agrun"
        aria-valuemin="0" aria-valuemax="100" aria-valuenow="0" aria-valuetext="Loading agrun">
        <div class="fill"></div>
      </div>
    </div>
    <div id="banner" class="banner" part="banner" role="alert" hidden></div>
    <p id="announce" class="visually-hidden" role="status"></p>
    <div id="body" class="body">
      <div class="conversation">
        <div id="transcript" class="transcript" part="transcript" role="log" aria-live="polite"
          aria-label="Conversation" tabindex="0"><div id="empty" class="empty-state" part="empty-state" hidden></div><ol id="messages"></ol></div>
        <form id="chat" class="composer" part="composer">
          <label for="input" class="visually-hidden">Message</label>
          <textarea id="input" part="input" rows="2" placeholder="Say something" autocomplete="off"
            aria-describedby="hint"></textarea>
          <button id="send" class="primary" part="send" type="submit" disabled>Send</button>
          <button id="stop" part="stop" type="button" hidden>Stop</button>
        </form>
        <p id="editing" class="hint editing" hidden></p>
        <p id="hint" class="hint">Enter sends, Shift+Enter starts a new line.</p>
      </div>
      ${PANELS.map(panel).join('')}
    </div>
  </div>
</div>`;
