/** An Entry for people: a block of `name  value` lines (get, cancel), or one line (list). */
import type { Entry } from '../queue/types.ts';
import { formatTime } from './output.ts';

/**
 * Whether the entry's lease had run out by `now` (store time; undefined: not known). An expired
 * lease stays on the entry until the next take or sweep: shown as held, it read as a worker
 * still running it (the third tester, on `state --at`).
 */
function leaseExpired(entry: Entry, now: number | undefined): boolean {
  return entry.lease !== null && now !== undefined && entry.lease.expiresAt <= now;
}

/** `now`: store time of the entry's reading (a live server's now, or `state --at`'s time), to say whether its lease had run out. */
export function entryBlock(entry: Entry, now?: number): string {
  const expired = leaseExpired(entry, now);
  const leased = expired ? 'open, its lease expired' : 'open, leased';
  const rows: [string, string | null][] = [
    ['entry', entry.entryId],
    ['tenant', entry.tenant],
    ['thread', entry.thread],
    ['agent', entry.agent],
    ['status', entry.status === 'closed' ? `closed ${entry.outcome}` : entry.lease === null ? 'open' : leased],
    ['submitted', formatTime(entry.submittedAt)],
    ['input', bytesText(entry.input)],
    ['key', entry.key],
    ['priority', entry.priority === 0 ? null : String(entry.priority)],
    ['not before', entry.notBefore === null ? null : formatTime(entry.notBefore)],
    ['deadline', entry.deadline === null ? null : formatTime(entry.deadline)],
    [
      'attempts',
      `${entry.attempts.length} of ${entry.maxAttempts}${entry.deferredAttempts > 0 ? ` (+${entry.deferredAttempts} deferred)` : ''}`,
    ],
    ...entry.attempts.map((a): [string, string] => [
      `  attempt ${a.attempt}`,
      `run ${a.runId}, epoch ${a.epoch}, started ${formatTime(a.startedAt)}`,
    ]),
    [
      'lease',
      entry.lease === null
        ? null
        : `${entry.lease.holder}, epoch ${entry.lease.epoch}, ${expired ? 'expired' : 'until'} ${formatTime(entry.lease.expiresAt)}`,
    ],
    [
      'metadata',
      Object.keys(entry.metadata).length === 0
        ? null
        : Object.entries(entry.metadata)
            .map(([k, v]) => `${k}=${v}`)
            .join(' '),
    ],
    ['closed', entry.closedAt === null ? null : formatTime(entry.closedAt)],
    ['result', entry.result === null ? null : bytesText(entry.result)],
    ['error', entry.error === null ? null : JSON.stringify(entry.error)],
  ];
  const shown = rows.filter((row): row is [string, string] => row[1] !== null);
  const width = Math.max(...shown.map(([name]) => name.length));
  return shown.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n');
}

export function entryLine(entry: Entry, now?: number): string {
  const holder = entry.lease === null ? null : entry.lease.holder;
  const state = holder === null ? 'waiting' : leaseExpired(entry, now) ? `waiting (the lease of ${holder} expired)` : `leased by ${holder}`;
  return `${entry.entryId}  ${formatTime(entry.submittedAt)}  ${entry.agent}  ${state}  attempts ${entry.attempts.length}/${entry.maxAttempts}  input ${bytesText(entry.input)}`;
}

/** Bytes as JSON-quoted text when short valid UTF-8, else their length. */
export function bytesText(bytes: Uint8Array): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  return text.length <= 80 && !text.includes('\uFFFD') ? JSON.stringify(text) : `<${bytes.byteLength} bytes>`;
}
