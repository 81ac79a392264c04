// The widget's look: every colour, size and font is a custom property a page may set on
// <agrun-chat> (README.md lists them); the defaults meet WCAG AA contrast in both schemes.
export const STYLES = `
:host {
  --agrun-chat-font: system-ui, sans-serif;
  --agrun-chat-font-size: 1rem;
  --agrun-chat-bg: #ffffff;
  --agrun-chat-fg: #1f2328;
  --agrun-chat-muted: #57606a;
  --agrun-chat-border: #d0d7de;
  --agrun-chat-control-border: #6e7781;
  --agrun-chat-surface: #f6f8fa;
  --agrun-chat-accent: #0b57d0;
  --agrun-chat-accent-fg: #ffffff;
  --agrun-chat-focus: #0b57d0;
  --agrun-chat-user-bg: #e8f0fe;
  --agrun-chat-user-fg: #1f2328;
  --agrun-chat-agent-bg: #f1f3f4;
  --agrun-chat-agent-fg: #1f2328;
  --agrun-chat-error-bg: #fce8e6;
  --agrun-chat-error-fg: #8a1c12;
  --agrun-chat-warning-bg: #fff4ce;
  --agrun-chat-warning-fg: #4d3900;
  --agrun-chat-radius: 0.6rem;
  --agrun-chat-gap: 0.75rem;
  --agrun-chat-panel-width: 24rem;
  display: block;
  height: 36rem;
  color: var(--agrun-chat-fg);
  background: var(--agrun-chat-bg);
  font: var(--agrun-chat-font-size) / 1.45 var(--agrun-chat-font);
}
@media (prefers-color-scheme: dark) {
  :host {
    --agrun-chat-bg: #0d1117;
    --agrun-chat-fg: #e6edf3;
    --agrun-chat-muted: #9ea7b3;
    --agrun-chat-border: #30363d;
    --agrun-chat-control-border: #8b949e;
    --agrun-chat-surface: #161b22;
    --agrun-chat-accent: #8ab4f8;
    --agrun-chat-accent-fg: #0d1117;
    --agrun-chat-focus: #8ab4f8;
    --agrun-chat-user-bg: #1c2b45;
    --agrun-chat-user-fg: #e6edf3;
    --agrun-chat-agent-bg: #21262d;
    --agrun-chat-agent-fg: #e6edf3;
    --agrun-chat-error-bg: #3d1512;
    --agrun-chat-error-fg: #ffb4ab;
    --agrun-chat-warning-bg: #3b2f00;
    --agrun-chat-warning-fg: #ffe08a;
  }
}
:host([hidden]) { display: none; }
[hidden] { display: none !important; }
* { box-sizing: border-box; }
.frame { container: agrun-chat / inline-size; height: 100%; }
.chat {
  display: flex; flex-direction: column; height: 100%;
  border: 1px solid var(--agrun-chat-border); border-radius: var(--agrun-chat-radius);
  background: var(--agrun-chat-bg); overflow: hidden;
}
.header {
  display: flex; flex-wrap: wrap; align-items: center; gap: 0.25rem var(--agrun-chat-gap);
  padding: 0.5rem var(--agrun-chat-gap); border-bottom: 1px solid var(--agrun-chat-border);
}
.heading { flex: 1 1 auto; min-width: 0; }
.title { margin: 0; font-size: 1.15rem; line-height: 1.3; }
.status { margin: 0; color: var(--agrun-chat-muted); font-size: 0.875rem; }
.tools { display: flex; gap: 0.375rem; }
button {
  font: inherit; font-size: 0.9375rem; cursor: pointer; min-height: 2.25rem;
  padding: 0.25rem 0.75rem; border-radius: calc(var(--agrun-chat-radius) * 0.75);
  border: 1px solid var(--agrun-chat-control-border);
  background: var(--agrun-chat-bg); color: var(--agrun-chat-fg);
}
button[aria-expanded='true'] { background: var(--agrun-chat-user-bg); color: var(--agrun-chat-user-fg); }
button.primary {
  background: var(--agrun-chat-accent); color: var(--agrun-chat-accent-fg);
  border-color: var(--agrun-chat-accent); font-weight: 600;
}
button:disabled { cursor: not-allowed; opacity: 0.6; }
:focus-visible { outline: 3px solid var(--agrun-chat-focus); outline-offset: 2px; }
.transcript:focus-visible, .panel-heading:focus-visible { outline-offset: -3px; }
.boot { padding: 0.5rem var(--agrun-chat-gap) 0; }
.bar {
  height: 0.5rem; border-radius: 0.25rem; overflow: hidden;
  background: var(--agrun-chat-surface); border: 1px solid var(--agrun-chat-control-border);
}
.fill {
  height: 100%; width: calc(var(--progress, 0) * 1%);
  background: var(--agrun-chat-accent); transition: width 0.2s ease-out;
}
.banner {
  margin: 0.5rem var(--agrun-chat-gap) 0; padding: 0.5rem 0.75rem;
  border-radius: calc(var(--agrun-chat-radius) * 0.75);
  background: var(--agrun-chat-warning-bg); color: var(--agrun-chat-warning-fg);
  border: 1px solid currentColor; font-size: 0.9375rem;
}
.body { flex: 1; min-height: 0; display: grid; grid-template-columns: minmax(0, 1fr); }
.conversation { display: flex; flex-direction: column; min-height: 0; min-width: 0; }
.transcript { flex: 1; min-height: 0; overflow-y: auto; padding: var(--agrun-chat-gap); }
.transcript ol { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 0.5rem; }
.transcript ol > li {
  max-width: 85%; padding: 0.5rem 0.75rem; border-radius: var(--agrun-chat-radius);
  overflow-wrap: anywhere;
}
.transcript ol > li::before { display: block; font-size: 0.75rem; font-weight: 600; }
.transcript li.user { align-self: flex-end; background: var(--agrun-chat-user-bg); color: var(--agrun-chat-user-fg); }
.transcript li.user::before { content: 'You' / 'You said:'; }
.transcript li.agent { align-self: flex-start; background: var(--agrun-chat-agent-bg); color: var(--agrun-chat-agent-fg); }
.transcript li.agent::before { content: 'agrun' / 'agrun answered:'; }
.said, .text.plain { white-space: pre-wrap; }
.markdown > :first-child { margin-top: 0; }
.markdown > :last-child { margin-bottom: 0; }
.markdown p, .markdown ul, .markdown ol, .markdown blockquote, .markdown table { margin: 0.5rem 0; }
.markdown ul, .markdown ol { padding-inline-start: 1.25rem; }
.markdown ul { list-style: disc; }
.markdown h1, .markdown h2, .markdown h3, .markdown h4, .markdown h5, .markdown h6 { font-size: 1rem; margin: 0.75rem 0 0.25rem; }
.markdown a { color: inherit; }
.markdown blockquote { border-inline-start: 3px solid var(--agrun-chat-control-border); margin-inline-start: 0; padding-inline-start: 0.75rem; }
.markdown table { border-collapse: collapse; display: block; overflow-x: auto; }
.markdown th, .markdown td { border: 1px solid var(--agrun-chat-border); padding: 0.25rem 0.5rem; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.875rem; }
.markdown :not(pre) > code { background: var(--agrun-chat-bg); padding: 0.05rem 0.3rem; border-radius: 0.25rem; }
.code { position: relative; margin: 0.5rem 0; direction: ltr; }
.code pre { text-align: left; margin: 0; border-radius: calc(var(--agrun-chat-radius) * 0.75); overflow-x: auto; }
.code pre code.hljs { padding: 0.75rem; padding-inline-end: 6.5rem; }
.code .action { position: absolute; top: 0.375rem; inset-inline-end: 0.375rem; }
.turn-note { margin: 0.375rem 0 0; font-size: 0.875rem; font-weight: 600; color: var(--agrun-chat-error-fg); }
li.user .turn-note { color: inherit; }
li.failed, li.not-sent { border-inline-start: 3px solid var(--agrun-chat-error-fg); }
.transcript li.user.failed, .transcript li.user.not-sent { background: var(--agrun-chat-error-bg); color: var(--agrun-chat-error-fg); }
li.stopped .turn-note { color: var(--agrun-chat-muted); }
.error-details { margin-top: 0.25rem; font-size: 0.875rem; }
.error-details summary, .call summary { cursor: pointer; }
.error-details p { margin: 0.25rem 0 0; overflow-wrap: anywhere; }
.actions { display: flex; flex-wrap: wrap; gap: 0.375rem; margin-top: 0.375rem; }
button.action { min-height: 2rem; padding: 0.125rem 0.625rem; font-size: 0.875rem; }
.call {
  margin: 0.375rem 0; padding: 0.25rem 0.5rem; font-size: 0.9375rem;
  border: 1px solid var(--agrun-chat-border); border-radius: calc(var(--agrun-chat-radius) * 0.75);
  background: var(--agrun-chat-bg);
}
.call.error summary { color: var(--agrun-chat-error-fg); }
.call-label { margin: 0.375rem 0 0.125rem; font-size: 0.8125rem; font-weight: 600; color: var(--agrun-chat-muted); }
.call pre { direction: ltr; text-align: left; margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 16rem; overflow-y: auto; }
.question { margin: 0.5rem 0 0; padding-top: 0.375rem; border-top: 1px solid var(--agrun-chat-border); }
.question p { margin: 0; }
.editing { color: var(--agrun-chat-fg); font-weight: 600; }
.empty-state { color: var(--agrun-chat-muted); max-width: 36rem; margin: 0 auto; text-align: center; }
.empty-state p { margin: 0.5rem 0; }
.empty { color: var(--agrun-chat-muted); margin: 0; }
.composer {
  display: flex; align-items: flex-end; gap: 0.5rem;
  padding: 0.5rem var(--agrun-chat-gap) 0.25rem; border-top: 1px solid var(--agrun-chat-border);
}
.composer textarea {
  flex: 1; min-width: 0; resize: none; font: inherit; padding: 0.5rem 0.625rem;
  border: 1px solid var(--agrun-chat-control-border); border-radius: calc(var(--agrun-chat-radius) * 0.75);
  background: var(--agrun-chat-bg); color: var(--agrun-chat-fg);
}
.composer textarea::placeholder { color: var(--agrun-chat-muted); opacity: 1; }
.hint { margin: 0; padding: 0 var(--agrun-chat-gap) 0.5rem; color: var(--agrun-chat-muted); font-size: 0.8125rem; }
.panel {
  min-height: 0; min-width: 0; overflow-y: auto; padding: 0 var(--agrun-chat-gap) var(--agrun-chat-gap);
  border-inline-start: 1px solid var(--agrun-chat-border); background: var(--agrun-chat-bg);
}
.panel-top {
  position: sticky; top: 0; display: flex; align-items: center; gap: 0.5rem;
  padding: 0.5rem 0; background: var(--agrun-chat-bg);
}
.panel-heading { flex: 1; margin: 0; font-size: 1.05rem; }
.panel h4 { margin: 1rem 0 0.25rem; font-size: 0.9375rem; }
.group-title { margin: 0.5rem 0 0; font-size: 0.8125rem; color: var(--agrun-chat-muted); }
.panel ul { margin: 0; padding-inline-start: 1.1rem; }
.panel li { margin: 0.25rem 0; overflow-wrap: anywhere; }
.panel p { margin: 0.25rem 0; }
.note { color: var(--agrun-chat-muted); font-size: 0.875rem; }
.entries { list-style: none; padding: 0 !important; }
.entries li { display: flex; align-items: center; gap: 0.5rem; justify-content: space-between; }
/* A long entry (or one long word) wraps in its own column; Forget keeps its one line. */
.entries li > span { min-width: 0; overflow-wrap: anywhere; }
.entries button { flex: none; white-space: nowrap; }
.kind { color: var(--agrun-chat-muted); font-size: 0.8125rem; }
/* A conversation's title wraps; its Rename and Delete keep their line. */
.entries button.chat-open { white-space: normal; text-align: start; overflow-wrap: anywhere; }
.chat-open[aria-current='true'] { font-weight: 600; }
.chat-tools { display: flex; flex: none; gap: 0.375rem; }
.chat-list li > form, .chat-list li > .confirm { flex: 1; }
.switch-row { margin: 0.5rem 0; }
button[role='switch'] { position: relative; padding-inline-start: 3.25rem; text-align: start; }
button[role='switch']::before, button[role='switch']::after {
  content: ''; position: absolute; top: 50%; border-radius: 1rem;
}
button[role='switch']::before {
  inset-inline-start: 0.6rem; width: 2.1rem; height: 1.2rem; margin-top: -0.6rem; background: var(--agrun-chat-control-border);
}
button[role='switch']::after {
  inset-inline-start: 0.75rem; width: 0.9rem; height: 0.9rem; margin-top: -0.45rem; background: var(--agrun-chat-bg);
}
button[role='switch'][aria-checked='true']::before { background: var(--agrun-chat-accent); }
button[role='switch'][aria-checked='true']::after { inset-inline-start: 1.65rem; background: var(--agrun-chat-accent-fg); }
.entry-text { font-size: 0.9375rem; }
.source { font: 0.8125rem ui-monospace, monospace; color: var(--agrun-chat-muted); overflow-wrap: anywhere; }
.layer { margin: 0.25rem 0 0.5rem; }
.layer li { font-size: 0.9375rem; }
fieldset { border: 1px solid var(--agrun-chat-border); border-radius: calc(var(--agrun-chat-radius) * 0.75); margin: 0.5rem 0; padding: 0.25rem 0.75rem 0.5rem; }
legend { font-weight: 600; padding: 0 0.25rem; }
.choice { display: flex; align-items: center; gap: 0.5rem; margin: 0.375rem 0; }
.choice input { width: 1.1rem; height: 1.1rem; margin: 0; accent-color: var(--agrun-chat-accent); }
.field { display: flex; flex-direction: column; gap: 0.125rem; margin: 0.5rem 0; }
.field label { font-size: 0.875rem; font-weight: 600; }
.field input {
  font: inherit; padding: 0.375rem 0.5rem; border: 1px solid var(--agrun-chat-control-border);
  border-radius: calc(var(--agrun-chat-radius) * 0.5); background: var(--agrun-chat-bg); color: var(--agrun-chat-fg);
}
.field input::placeholder { color: var(--agrun-chat-muted); opacity: 1; }
.visually-hidden {
  position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px;
  overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0;
}
@container agrun-chat (min-width: 48rem) {
  .body.panel-open { grid-template-columns: minmax(0, 1fr) var(--agrun-chat-panel-width); }
}
@container agrun-chat (max-width: 47.99rem) {
  .body.panel-open .conversation { display: none; }
  .panel { border-inline-start: 0; }
}
@media (prefers-reduced-motion: reduce) {
  .fill { transition: none; }
}
`;
