// The thread panel: a thread's open entries, in order (GET .../threads/{thread}/entries); a
// ticket opens its timeline.
import { getJson, path } from './api.js';
import { el, linkButton, number, row, say, time } from './dom.js';
import { showTimeline } from './timeline.js';

export async function showThread(tenant, thread) {
  const body = document.querySelector('#thread-entries tbody');
  try {
    const { entries } = await getJson(path`/v1/tenants/${tenant}/threads/${thread}/entries`);
    say('thread-message', entries.length === 0 ? 'no open entries' : '');
    body.replaceChildren(...entries.map(entryRow));
  } catch (error) {
    say('thread-message', error.message);
    body.replaceChildren();
  }
}

function entryRow(entry) {
  const open = linkButton(entry.entryId, () => showTimeline(entry.tenant, entry.entryId));
  const state = entry.lease ? `leased by ${entry.lease.holder}` : entry.notBefore ? `waits until ${time(entry.notBefore)}` : 'waiting';
  const tr = row([el('td', {}, open), entry.agent, state, number(entry.attempts.length), time(entry.submittedAt)]);
  tr.dataset.entry = entry.entryId;
  return tr;
}
