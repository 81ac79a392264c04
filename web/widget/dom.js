// Building DOM from data without markup strings: a person's words and a model's reply are
// only ever text nodes, never parsed as HTML.

/**
 * An element: `h('li', { class: 'user', part: 'message' }, 'text', child)`. Attributes are
 * set as given (`hidden: true` sets a boolean attribute, false or null leaves it out);
 * `on: { click }` adds listeners.
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'on') {
      for (const [event, listener] of Object.entries(value)) element.addEventListener(event, listener);
    } else if (value === true) {
      element.setAttribute(name, '');
    } else if (value !== false && value !== null && value !== undefined) {
      element.setAttribute(name, String(value));
    }
  }
  element.append(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
  return element;
}

/** Text cut to `max` characters (with an ellipsis), for lists that must stay readable. */
export function clip(text, max = 240) {
  const value = String(text ?? '');
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}

/**
 * Shift the levels of the headings in `root` by `offset` (aria-level), so a widget whose title
 * is, say, a page's h1 has panels at level 2: the outline never skips a level.
 */
export function levelHeadings(root, offset) {
  for (const heading of root.querySelectorAll('h2, h3, h4, h5, h6')) {
    const level = Number(heading.tagName[1]) + offset;
    if (offset) heading.setAttribute('aria-level', String(Math.min(6, Math.max(1, level))));
    else heading.removeAttribute('aria-level');
  }
}

/** The offset for an element's `heading-level` attribute (its title is an h2 otherwise). */
export function headingOffset(element) {
  const level = element.getAttribute('heading-level');
  return /^[1-6]$/.test(level ?? '') ? Number(level) - 2 : 0;
}
