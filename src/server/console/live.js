// The live panel: the log's events as they are appended (GET /v1/events, an admin's stream),
// newest first, the last 200 kept. A dropped stream reconnects after a second from the last
// message it had (Last-Event-ID), so nothing is missed or shown twice.
import { readEvents } from './api.js';
import { el, linkButton, row, time } from './dom.js';
import { details, showTimeline } from './timeline.js';

const KEEP = 200;
const REFUSED = new Set(['Unauthorized', 'Forbidden', 'InvalidArgument']);
let running = null;

export function toggleLive(tenant, thread) {
  if (running !== null) {
    running.abort();
    running = null;
    return false;
  }
  running = new AbortController();
  follow(new URLSearchParams({ ...(tenant ? { tenant } : {}), ...(thread ? { thread } : {}) }), running.signal);
  return true;
}

async function follow(query, signal) {
  const state = document.getElementById('live-state');
  let lastId = '';
  while (!signal.aborted) {
    try {
      await readEvents(`/v1/events?${query}`, {
        signal,
        lastId,
        onComment: (text) => text.startsWith('runlog events') && (state.textContent = 'live'),
        onMessage: (message) => {
          lastId = message.id;
          show(message.data);
        },
      });
      state.textContent = 'reconnecting';
    } catch (error) {
      if (signal.aborted) break;
      state.textContent = error.message;
      if (REFUSED.has(error.code)) return; // another try would be refused alike
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  state.textContent = 'stopped';
}

function show(event) {
  const body = document.querySelector('#live tbody');
  const ticket = event.entryId ? linkButton(event.entryId, () => showTimeline(event.tenant, event.entryId)) : '';
  const tr = row([time(event.at), event.type, event.tenant, event.thread, el('td', {}, ticket), details(event)]);
  tr.dataset.type = event.type;
  tr.dataset.entry = event.entryId ?? '';
  body.prepend(tr);
  while (body.children.length > KEEP) body.lastElementChild.remove();
}
