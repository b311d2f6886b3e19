// Calls to runlog's HTTP API. Every call carries the token the user gave (authorization:
// Bearer <token>); the token lives in this tab only (sessionStorage), never in the URL:
// one given in the fragment (#token=...) is taken from there and the fragment cleared.

const TOKEN_KEY = 'runlog-console-token';

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

export function setToken(value) {
  if (value === '') sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, value);
}

/**
 * Reads the URL fragment (`#token=...&tenant=...&ticket=...`): a token goes into the tab's
 * storage and the fragment is cleared from the address bar. Answers the other parameters.
 */
export function takeFragment() {
  const given = new URLSearchParams(location.hash.slice(1));
  if (given.has('token')) setToken(given.get('token'));
  if (location.hash !== '') history.replaceState(null, '', location.pathname + location.search);
  return given;
}

function headers(extra = {}) {
  return token() === '' ? extra : { ...extra, authorization: `Bearer ${token()}` };
}

/** `/v1/tenants/{tenant}/...` with each part percent-encoded. */
export function path(strings, ...parts) {
  return strings.reduce((done, text, i) => done + text + (i < parts.length ? encodeURIComponent(parts[i]) : ''), '');
}

/** A refusal of the API: its code (Unauthorized, TicketNotFound, ...) and message. */
export class ApiError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.code = code;
  }
}

export async function getJson(url) {
  const response = await fetch(url, { headers: headers() });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(body?.code ?? response.status, body?.message ?? response.statusText);
  return body;
}

/**
 * Reads a Server-Sent Events stream with fetch (EventSource cannot send a token): calls
 * onComment(text) for comment lines and onMessage({ id, type, data }) for each message,
 * until the stream ends or the signal aborts. `lastId` resumes after a message already seen.
 */
export async function readEvents(url, { signal, lastId, onComment, onMessage }) {
  const extra = { accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) };
  const response = await fetch(url, { headers: headers(extra), signal });
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    throw new ApiError(body?.code ?? response.status, body?.message ?? response.statusText);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += value;
    const blocks = buffered.split('\n\n');
    buffered = blocks.pop();
    for (const block of blocks) dispatch(block, onComment, onMessage);
  }
}

function dispatch(block, onComment, onMessage) {
  const message = { id: '', type: 'message', data: '' };
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) onComment(line.slice(1).trim());
    else if (line.startsWith('id: ')) message.id = line.slice(4);
    else if (line.startsWith('event: ')) message.type = line.slice(7);
    else if (line.startsWith('data: ')) message.data += line.slice(6);
  }
  if (message.data !== '') onMessage({ ...message, data: JSON.parse(message.data) });
}
