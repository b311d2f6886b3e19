/**
 * `runlog verify`'s check of the snapshots a log keeps (src/projector/snapshots.ts reads them
 * for the queue). Each snapshot of a partition is judged as the queue would judge it on open;
 * one the queue would use must hold what the log says: its state must equal the state of the
 * partition's view folded from offset zero up to the offset it covers (viewState, the queue's
 * own snapshot function, both sides through the snapshot codec), and the view it restores must
 * give that same state back.
 *
 * Verdicts: 'equal'; 'differs' (a problem: the paths that differ); 'ignored' (a problem: the
 * queue would not use it, the reason: damaged, another log's, past the log's end...); 'stale'
 * (a note: a compaction since it was taken may have dropped tombstones it did not see, which
 * is how a snapshot normally ages; the queue replays instead).
 *
 * The snapshots are read before the log is opened for the replay (readSnapshots, then a fresh
 * read-only open), so a live writer's newest snapshot covers no record the replay cannot see.
 */
import { decodeSnapshot, decodeSnapshotState, encodeSnapshotState } from '../events/snapshot-codec.ts';
import type { PartitionState } from '../events/snapshot-types.ts';
import type { EventLog } from '../log/event-log.ts';
import { snapshotView } from '../projector/snapshots.ts';
import type { PartitionView } from '../../projections/partition-view.ts';
import { viewState } from '../../projections/view-snapshot.ts';
import { differences } from './state-diff.ts';

export interface LoadedSnapshot {
  name: string;
  bytes: Uint8Array;
}

export interface SnapshotVerdict {
  name: string;
  /** The offset it covers up to (null: its envelope does not decode). */
  nextOffset: bigint | null;
  takenAt: number | null;
  verdict: 'equal' | 'differs' | 'ignored' | 'stale';
  /** Why it is ignored or stale; for 'differs', each differing path: `path: snapshot X, replay Y`. */
  reasons: string[];
}

/** The snapshots the log keeps of each partition asked for, newest first, read whole now. */
export async function readSnapshots(log: EventLog, partitions: readonly number[]): Promise<Map<number, LoadedSnapshot[]>> {
  const loaded = new Map<number, LoadedSnapshot[]>();
  for (const p of partitions) {
    const stored = log.snapshots === undefined ? [] : await log.snapshots.list(p);
    const snapshots: LoadedSnapshot[] = [];
    for (const { name, read } of stored) {
      try {
        snapshots.push({ name, bytes: await read() });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // the writer replaced it since it was listed
      }
    }
    loaded.set(p, snapshots);
  }
  return loaded;
}

/**
 * One partition's snapshots against its replay: told of each record before it is folded
 * (`before`), it keeps the replay's state at each offset a snapshot covers up to; then
 * `judge` gives each snapshot's verdict.
 */
export class SnapshotWitness {
  readonly #covers: (bigint | null)[];
  readonly #replayed = new Map<bigint, PartitionState>();
  /** The last offset `before` was told of, and the first offset found past a gap (records not there: compacted away, or a Kafka transaction's marker). */
  #lastOffset = -1n;
  #pastFirstGap: bigint | null = null;

  constructor(
    readonly partition: number,
    readonly snapshots: readonly LoadedSnapshot[],
  ) {
    this.#covers = snapshots.map(({ bytes }) => {
      try {
        return decodeSnapshot(bytes).nextOffset;
      } catch {
        return null; // judged below, as the queue judges it
      }
    });
  }

  /** Call before folding the record at `offset` into `view`, and with the log's end after the last. */
  before(offset: bigint, view: PartitionView): void {
    if (this.#pastFirstGap === null && offset > this.#lastOffset + 1n) this.#pastFirstGap = offset;
    this.#lastOffset = offset;
    for (const covers of this.#covers)
      if (covers !== null && covers <= offset && !this.#replayed.has(covers))
        this.#replayed.set(covers, inThreadOrder(throughCodec(viewState(view))));
  }

  async judge(log: EventLog): Promise<SnapshotVerdict[]> {
    const verdicts: SnapshotVerdict[] = [];
    for (const snapshot of this.snapshots) verdicts.push(await this.#judgeOne(log, snapshot));
    return verdicts;
  }

  async #judgeOne(log: EventLog, { name, bytes }: LoadedSnapshot): Promise<SnapshotVerdict> {
    let restored: PartitionView;
    try {
      restored = await snapshotView(log, this.partition, { name, read: async () => bytes });
    } catch (error) {
      return await ignored(log, this.partition, name, bytes, error);
    }
    const envelope = decodeSnapshot(bytes);
    const verdict = { name, nextOffset: envelope.nextOffset, takenAt: envelope.takenAt };
    const replayed = this.#replayed.get(envelope.nextOffset);
    if (replayed === undefined) throw new Error(`no replayed state at ${envelope.nextOffset}: the replay must reach the log's end`);
    const found = [
      ...differences(inThreadOrder(decodeSnapshotState(envelope.state)), replayed).map((d) => ({
        path: d.path,
        text: `${d.path}: snapshot ${d.left}, replay ${d.right}`,
      })),
      ...differences(inThreadOrder(throughCodec(viewState(restored))), replayed).map((d) => ({
        path: d.path,
        text: `restored ${d.path}: ${d.left}, replay ${d.right}`,
      })),
    ];
    // The counters count every event ever folded: a replay that could not read some records below the snapshot's offset
    // (compacted away) counts fewer, and the snapshot, taken by a queue that folded them, is right. A note, not a problem.
    const uncounted = this.#pastFirstGap !== null && this.#pastFirstGap <= envelope.nextOffset;
    const noted = uncounted ? found.filter(({ path }) => path.startsWith('metrics.')) : [];
    const problems = found.filter((difference) => !noted.includes(difference));
    const reasons = [
      ...problems.map(({ text }) => text),
      ...noted.map(({ text }) => `note: ${text} (records below @${this.#pastFirstGap} were compacted away: the replay cannot count them)`),
    ];
    return { ...verdict, verdict: problems.length === 0 ? 'equal' : 'differs', reasons };
  }
}

/**
 * A state with its threads in one order (by tenant, then thread): the order a view holds its
 * threads in says nothing of the queue (takes follow the head indexes), and a view opened by a
 * catch-up keeps a thread it emptied where it was until the catch-up ends, where a replay
 * folding one event at a time makes it anew at the end when it fills again: the same threads,
 * in another order, were reported as a snapshot that differs.
 */
function inThreadOrder(state: PartitionState): PartitionState {
  const threads = [...state.threads].sort((a, b) => compareText(a.tenant, b.tenant) || compareText(a.thread, b.thread));
  return { ...state, threads };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A state as a snapshot would give it back (bytes as Buffers, numbers as avsc reads them): so both sides compare alike. */
function throughCodec(state: PartitionState): PartitionState {
  return decodeSnapshotState(encodeSnapshotState(state));
}

/** A snapshot the queue would not use: 'stale' if staleness alone rules it out (see the top), else 'ignored'. */
async function ignored(log: EventLog, partition: number, name: string, bytes: Uint8Array, error: unknown): Promise<SnapshotVerdict> {
  const why = error instanceof Error ? error.message : String(error);
  try {
    const { nextOffset, takenAt, logId, partition: named } = decodeSnapshot(bytes);
    const stale = (await log.snapshots!.staleness(partition))(nextOffset, takenAt);
    const ours = logId === log.snapshots!.logId && named === partition && nextOffset <= (await log.endOffset(partition));
    const onlyStale = stale !== null && ours;
    return { name, nextOffset, takenAt, verdict: onlyStale ? 'stale' : 'ignored', reasons: [why] };
  } catch {
    return { name, nextOffset: null, takenAt: null, verdict: 'ignored', reasons: [why] };
  }
}
