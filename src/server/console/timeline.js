// The ticket panel: an entry's events in log order (GET .../entries/{id}/history), with the
// time since the previous event, its attempts and errors marked, and a summary of the entry.
import { getJson, path } from './api.js';
import { bytesText, duration, el, row, say, time } from './dom.js';

export async function showTimeline(tenant, entryId) {
  document.getElementById('ticket-tenant').value = tenant;
  document.getElementById('ticket-id').value = entryId;
  const body = document.querySelector('#timeline tbody');
  const summary = document.getElementById('ticket-summary');
  try {
    const { entry, events } = await getJson(path`/v1/tenants/${tenant}/entries/${entryId}/history`);
    say('ticket-message', '');
    summary.replaceChildren(...summaryOf(entry, events));
    body.replaceChildren(...events.map(eventRow));
  } catch (error) {
    say('ticket-message', error.message);
    summary.replaceChildren();
    body.replaceChildren();
  }
}

function summaryOf(entry, events) {
  if (entry === null) return pairs({ status: 'pruned', events: events.length });
  return pairs({
    ticket: entry.entryId,
    thread: entry.thread,
    agent: entry.agent,
    status: entry.outcome ? `${entry.status}, ${entry.outcome}` : entry.status,
    attempts: `${entry.attempts.length} of ${entry.maxAttempts}`,
    error: entry.error,
    lease: entry.lease && `${entry.lease.holder} until ${time(entry.lease.expiresAt)}`,
  });
}

function pairs(fields) {
  return Object.entries(fields)
    .filter(([, value]) => value !== null && value !== undefined)
    .flatMap(([name, value]) => [el('dt', {}, name), el('dd', {}, String(value))]);
}

function eventRow(event) {
  const since = event.sincePreviousMs === null ? '' : `+${duration(event.sincePreviousMs)}`;
  const className = event.error ? 'error' : event.type === 'AttemptStarted' ? 'attempt' : '';
  const tr = row([time(event.at), since, String(event.offset), event.type, details(event)], { className });
  tr.dataset.type = event.type;
  return tr;
}

/** What an event says, in a line. */
export function details(event) {
  const parts = {
    Submitted: () => [
      `agent ${event.agent}`,
      `input ${bytesText(event.input)}`,
      event.key && `key ${event.key}`,
      `max ${event.maxAttempts} attempts`,
    ],
    Leased: () => [`holder ${event.holder}`, `epoch ${event.epoch}`, `until ${time(event.expiresAt)}`],
    LeaseExtended: () => [`holder ${event.holder}`, `until ${time(event.expiresAt)}`],
    AttemptStarted: () => [`attempt ${event.attempt}`, `run ${event.runId}`],
    Yielded: () => [
      event.kind,
      event.error && `error ${JSON.stringify(event.error)}`,
      event.notBefore && `again at ${time(event.notBefore)}`,
    ],
    CancelRequested: () => [event.reason && `reason ${JSON.stringify(event.reason)}`],
    Closed: () => [
      event.outcome,
      event.result && `result ${bytesText(event.result)}`,
      event.error && `error ${JSON.stringify(event.error)}`,
    ],
    EntriesPruned: () => [`${event.entryIds.length} entries pruned`],
    CommandAnswered: () => [`${event.command} request ${event.requestId}`, event.code && `${event.code}: ${event.message}`],
  }[event.type];
  return parts === undefined ? '' : parts().filter(Boolean).join(' · ');
}
