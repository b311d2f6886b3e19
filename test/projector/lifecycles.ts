/**
 * Random but plausible logs for projection tests: entries of a few tenants, agents and
 * threads submitted, leased, run (attempts), retried with errors, closed, cancelled and
 * pruned (an EntriesPruned and tombstones), stamped by one clock that only moves forward.
 * A step that does not apply (no entry in the state it needs) does nothing.
 */
import fc from 'fast-check';
import { encodeEvent } from '../../src/events/codec.ts';
import { PRUNED_KEY, recordKeyOf, stateKey, submissionKey } from '../../src/events/keys.ts';
import type { RunlogEvent } from '../../src/events/types.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import { partitionOf } from '../../src/log/partitioner.ts';

export interface Step {
  op: 'submit' | 'start' | 'retry' | 'succeed' | 'fail' | 'cancel' | 'prune';
  pick: number;
  tenant: number;
  agent: number;
  thread: number;
  dtMs: number;
  error: number;
}

export const step: fc.Arbitrary<Step> = fc.record({
  op: fc.constantFrom('submit', 'submit', 'start', 'start', 'retry', 'succeed', 'fail', 'cancel', 'prune'),
  pick: fc.nat(),
  tenant: fc.nat(2),
  agent: fc.nat(2),
  thread: fc.nat(3),
  dtMs: fc.nat(5_000),
  error: fc.nat(3),
});

export const steps = (maxLength = 60): fc.Arbitrary<Step[]> => fc.array(step, { maxLength });

export interface PlannedRecord {
  partition: number;
  key: string;
  event: RunlogEvent | null;
}

interface SimEntry {
  tenant: string;
  thread: string;
  entryId: string;
  agent: string;
  status: 'open' | 'running' | 'closed' | 'pruned';
  attempts: number;
  epoch: number;
}

export const ERRORS = [
  'Error: timeout after 30000 ms',
  'Error: timeout after 15000 ms',
  'TypeError: x is undefined',
  'Error: HTTP 503 from billing',
];

/** The records `steps` make, for a log of `partitions` partitions, the clock starting at `startAt`. */
export function lifecycleRecords(steps: readonly Step[], partitions: number, startAt = 1_767_225_600_000): PlannedRecord[] {
  const records: PlannedRecord[] = [];
  const entries: SimEntry[] = [];
  const seqs = new Map<number, number>();
  let at = startAt;
  const emit = (entry: SimEntry, event: RunlogEvent): void => {
    records.push({ partition: partitionOf(entry.tenant, entry.thread, partitions), key: recordKeyOf(event), event });
  };
  const base = (entry: SimEntry) => ({ tenant: entry.tenant, thread: entry.thread, entryId: entry.entryId, at });
  const find = (pick: number, status: SimEntry['status'][]): SimEntry | undefined => {
    const candidates = entries.filter((entry) => status.includes(entry.status));
    return candidates[pick % Math.max(1, candidates.length)];
  };
  for (const s of steps) {
    at += s.dtMs;
    if (s.op === 'submit') {
      const tenant = `tenant-${s.tenant}`;
      const thread = `thread-${s.thread}`;
      const partition = partitionOf(tenant, thread, partitions);
      const seq = (seqs.get(partition) ?? 0) + 1;
      seqs.set(partition, seq);
      const entry: SimEntry = {
        tenant,
        thread,
        entryId: `${partition}-${seq}`,
        agent: `agent-${s.agent}`,
        status: 'open',
        attempts: 0,
        epoch: 0,
      };
      entries.push(entry);
      emit(entry, {
        ...base(entry),
        type: 'Submitted',
        seq,
        agent: entry.agent,
        input: new TextEncoder().encode(`{"n":${seq}}`),
        key: null,
        strategy: 'enqueue',
        priority: 0,
        notBefore: null,
        deadline: null,
        maxAttempts: 5,
        metadata: {},
      });
      continue;
    }
    const entry = find(s.pick, s.op === 'start' || s.op === 'cancel' ? ['open'] : s.op === 'prune' ? ['closed'] : ['running']);
    if (entry === undefined) continue;
    const error = ERRORS[s.error]!;
    switch (s.op) {
      case 'start':
        entry.epoch++;
        entry.attempts++;
        entry.status = 'running';
        emit(entry, { ...base(entry), type: 'Leased', holder: 'w', epoch: entry.epoch, expiresAt: at + 30_000, deferredAttempts: 0 });
        emit(entry, {
          ...base(entry),
          type: 'AttemptStarted',
          runId: `run-${entry.entryId}-${entry.attempts}`,
          attempt: entry.attempts,
          epoch: entry.epoch,
        });
        break;
      case 'retry':
        entry.status = 'open';
        emit(entry, { ...base(entry), type: 'Yielded', epoch: entry.epoch, kind: 'retry', error, notBefore: null, deferredAttempts: 0 });
        break;
      case 'succeed':
      case 'fail':
        entry.status = 'closed';
        emit(entry, {
          ...base(entry),
          type: 'Closed',
          outcome: s.op === 'succeed' ? 'succeeded' : 'failed',
          result: null,
          error: s.op === 'fail' ? error : null,
          deferredAttempts: 0,
        });
        break;
      case 'cancel':
        entry.status = 'closed';
        emit(entry, { ...base(entry), type: 'CancelRequested', reason: 'not needed', deferredAttempts: 0 });
        break;
      case 'prune': {
        entry.status = 'pruned';
        const partition = partitionOf(entry.tenant, entry.thread, partitions);
        const pruned: RunlogEvent = {
          type: 'EntriesPruned',
          tenant: '',
          thread: '',
          entryId: '',
          at,
          entryIds: [entry.entryId],
          issuedThrough: seqs.get(partition)!,
        };
        records.push({ partition, key: PRUNED_KEY, event: pruned });
        for (const key of [submissionKey(entry.entryId), stateKey(entry.entryId)]) records.push({ partition, key, event: null });
        break;
      }
    }
  }
  return records;
}

/** Appends `records` to `log`, a few at a time per append, in order. */
export async function appendRecords(log: EventLog, records: readonly PlannedRecord[]): Promise<void> {
  for (const { partition, key, event } of records) {
    await log.append(partition, [{ key, value: event === null ? null : encodeEvent(event) }]);
  }
}
