// Small DOM and formatting helpers shared by the panels.

/** `el('td', { className: 'number' }, 'text', childNode)`: an element with properties and children (text is never parsed as HTML). */
export function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

export function row(cells, props = {}) {
  return el('tr', props, ...cells.map((cell) => (cell instanceof Node && cell.nodeName === 'TD' ? cell : el('td', {}, cell ?? ''))));
}

export function number(value) {
  return el('td', { className: 'number' }, String(value));
}

/** Store-clock epoch ms as `2026-12-01 11:59:03.120` (UTC). */
export function time(ms) {
  return ms === null || ms === undefined ? '' : new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/** A duration in ms as `850 ms`, `3.2 s`, `4 min 5 s`, `2 h 3 min`. */
export function duration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.floor((ms % 60_000) / 1000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** Base64 bytes as text when they are UTF-8 (cut at `max` characters), else their size. */
export function bytesText(base64, max = 80) {
  if (base64 === null || base64 === undefined) return '';
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
  } catch {
    return `<${bytes.length} bytes>`;
  }
}

/** Replaces a panel's message (an error's text, or nothing). */
export function say(id, text) {
  document.getElementById(id).textContent = text;
}

/** A button that looks like a link and runs `action`. */
export function linkButton(text, action) {
  return el('button', { type: 'button', className: 'link', onclick: action }, text);
}
