// Answers as rendered markdown: markdown-it parses (raw HTML off, so a model's `<script>` is
// text), highlight.js colours fenced code, and DOMPurify keeps only the tags, attributes and
// URLs listed here. Images are not rendered at all: a model's answer must not make the page
// fetch anything (an image URL can carry the conversation to another host). The libraries
// are vendored in ./vendor by the build (build.sh's vendor_markdown) and load on first use.

const TAGS = ['p', 'br', 'hr', 'strong', 'em', 's', 'del', 'code', 'pre', 'span', 'a', 'blockquote',
  'ul', 'ol', 'li', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'thead', 'tbody', 'tr', 'th', 'td'];
const ATTRIBUTES = ['href', 'class', 'start', 'title', 'style'];
const SAFE_URL = /^(?:https?:|mailto:|#)/i;

let loading = null;
let render = null;

/** Load the libraries once; resolves to whether answers can be rendered (false: plain text). */
export function loadMarkdown() {
  loading ??= Promise.all([
    import('./vendor/markdown-it.mjs'),
    import('./vendor/highlight.mjs'),
    import('./vendor/purify.mjs'),
  ]).then(([markdownIt, highlight, purify]) => {
    render = makeRenderer(markdownIt.default, highlight.default, purify.default);
    return true;
  }, (error) => {
    console.warn('agrun-chat: answers are shown as plain text, the markdown libraries did not load', error);
    return false;
  });
  return loading;
}

function makeRenderer(markdownit, hljs, DOMPurify) {
  const md = markdownit({
    html: false,
    linkify: true,
    breaks: true,
    highlight(code, language) {
      const known = language && hljs.getLanguage(language);
      const body = known ? hljs.highlight(code, { language, ignoreIllegals: true }).value : md.utils.escapeHtml(code);
      return `<pre><code class="hljs${known ? ` language-${md.utils.escapeHtml(language)}` : ''}">${body}</code></pre>`;
    },
  });
  md.disable('image');
  const purify = DOMPurify();
  purify.addHook('uponSanitizeAttribute', (node, data) => {
    // highlight.js colours with classes; a style attribute is never needed.
    if (data.attrName === 'style') data.keepAttr = false;
    if (data.attrName === 'href' && !SAFE_URL.test(data.attrValue.trim())) data.keepAttr = false;
  });
  purify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A') {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer nofollow');
    }
  });
  const config = {
    ALLOWED_TAGS: TAGS, ALLOWED_ATTR: ATTRIBUTES, ALLOW_DATA_ATTR: false, ALLOW_ARIA_ATTR: false,
    ALLOWED_URI_REGEXP: SAFE_URL, RETURN_DOM_FRAGMENT: true,
  };
  return (text) => purify.sanitize(md.render(text), config);
}

/** `text` as a fragment of safe, rendered markdown; null until loadMarkdown() has resolved true. */
export function renderMarkdown(text) {
  return render ? render(text) : null;
}
