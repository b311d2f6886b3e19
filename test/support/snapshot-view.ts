/**
 * A canonical, comparable picture of a view: what replay must reproduce exactly.
 * Index internals (heaps, lazy deletions) are left out; they change no answer.
 */
import type { PartitionView } from '../../projections/partition-view.ts';
import type { Answer } from '../../projections/answers.ts';
import { threadKey } from '../../src/events/keys.ts';
import { toPublicEntry } from '../../src/queue/public-entry.ts';
import type { Entry } from '../../src/queue/types.ts';

export interface ViewSnapshot {
  issuedThrough: number;
  ticketKey: { secret: string; legacyThrough: number } | null;
  /** The open entries. */
  entries: Entry[];
  /** The closed tickets: the ticket index's columns (typed arrays as plain arrays). */
  closed: Record<string, unknown>;
  openEntries: Record<string, string[]>;
  runIds: Record<string, string>;
  submissionKeys: Record<string, string>;
  openByTenant: Record<string, number>;
  /** Answers to requests of the commands topic, by record key. */
  answers: Record<string, Omit<Answer, 'key'>>;
}

export function snapshotView(view: PartitionView): ViewSnapshot {
  const entries = [...view.entries.values()].sort((a, b) => a.seq - b.seq).map(toPublicEntry);
  const openEntries: Record<string, string[]> = {};
  const runIds: Record<string, string> = {};
  const threads = [...view.threads.values()].map((thread): [string, typeof thread] => [threadKey(thread.tenant, thread.thread), thread]);
  for (const [id, thread] of threads.sort(byKey)) {
    openEntries[id] = thread.openEntries().map((entry) => entry.entryId);
    for (const [runId, entryId] of [...thread.runIds].sort(byKey)) runIds[`${id}\u0000${runId}`] = entryId;
  }
  return {
    issuedThrough: view.issuedThrough,
    ticketKey:
      view.ticketKey === null
        ? null
        : { secret: Buffer.from(view.ticketKey.secret).toString('hex'), legacyThrough: view.ticketKey.legacyThrough },
    entries,
    closed: closedColumns(view),
    openEntries,
    runIds,
    submissionKeys: Object.fromEntries([...view.submissionKeys].sort(byKey)),
    openByTenant: Object.fromEntries([...view.openByTenant].sort(byKey)),
    answers: Object.fromEntries(
      view.answers
        .all()
        .map(({ key, ...answer }): [string, Omit<Answer, 'key'>] => [key, answer])
        .sort(byKey),
    ),
  };
}

function closedColumns(view: PartitionView): Record<string, unknown> {
  const columns = view.closed.index.toColumns();
  return Object.fromEntries(
    Object.entries(columns).map(([name, column]) => [name, ArrayBuffer.isView(column) ? [...(column as Float64Array)] : column]),
  );
}

function byKey<T>(a: [string, T], b: [string, T]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}
