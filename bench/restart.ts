/**
 * Restart: a partition holding `closed` retained closed entries and `open` open ones (inputs of
 * 100 bytes), built fast (encoded records appended straight to a one-partition file log, in big
 * batches), then opened twice: once replaying the whole log (there is no snapshot yet; the
 * queue's stop then writes one), and once more, from that snapshot (the restart). The target:
 * 10M closed + 100k open open in under 5 s, whatever the log's length.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunlogEvent } from '../src/events/types.ts';
import type { AppendRecord, EventLog } from '../src/log/event-log.ts';
import { openLog } from '../src/log/open-log.ts';
import { openRunQueue } from '../src/queue/open-run-queue.ts';
import type { RunlogWarning } from '../src/warnings.ts';
import type { LogSite } from './logs.ts';
import type { Row } from './rows.ts';
import { submittedEvent } from './submitted-event.ts';
import { AGENT, TENANT, benchEntryId, lifecycleEvents, recordsOf } from './throughput.ts';

export const RESTART_TARGET = { closed: 10_000_000, open: 100_000, seconds: 5 };

const BATCH_RECORDS = 16_384;
const CLOSED_THREADS = 1_000;
const OPEN_PER_THREAD = 10;
const INPUT = new Uint8Array(100).fill(0x61);

export interface Restart {
  closed: number;
  open: number;
  records: number;
  buildSeconds: number;
  /** Opening with no snapshot: the whole log replayed. */
  replaySeconds: number;
  /** The stop after it, which writes the snapshot. */
  stopSeconds: number;
  snapshotBytes: number;
  /** Opening again, from the snapshot. */
  restartSeconds: number;
}

function submitted(thread: string, seq: number, at: number): RunlogEvent {
  return submittedEvent({ tenant: TENANT, thread, entryId: benchEntryId(0, seq), seq, at }, { agent: AGENT, input: INPUT });
}

async function buildLog(log: EventLog, closed: number, open: number): Promise<number> {
  let batch: AppendRecord[] = [];
  let records = 0;
  const add = async (events: RunlogEvent[]): Promise<void> => {
    for (const event of events) event.type === 'Submitted' && (event.input = INPUT);
    batch.push(...recordsOf(events));
    if (batch.length >= BATCH_RECORDS) {
      records += batch.length;
      await log.append(0, batch);
      batch = [];
    }
  };
  const at = Date.now() - closed - open;
  for (let i = 0; i < closed; i++)
    await add(lifecycleEvents(TENANT, `closed-${i % CLOSED_THREADS}`, benchEntryId(0, i + 1), i + 1, at + i, `run-${i}`));
  for (let i = 0; i < open; i++) await add([submitted(`open-${Math.floor(i / OPEN_PER_THREAD)}`, closed + i + 1, at + closed + i)]);
  records += batch.length;
  if (batch.length > 0) await log.append(0, batch);
  return records;
}

async function timed<T>(body: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await body();
  return [value, (performance.now() - started) / 1000];
}

export async function restartTime(site: LogSite, closed: number, open: number): Promise<Restart> {
  if (site.config.kind !== 'file') throw new Error('the restart bench runs on the file log (its snapshots lie beside it)');
  const config = { ...site.config, fsync: false }; // building and replaying: nothing here measures appends
  const [records, buildSeconds] = await timed(async () => {
    const log = await openLog(config, 1);
    try {
      return await buildLog(log, closed, open);
    } finally {
      await log.close();
    }
  });
  const warnings: RunlogWarning[] = [];
  const onWarning = (warning: RunlogWarning): void => void warnings.push(warning);
  const [first, replaySeconds] = await timed(() => openRunQueue({ log: config, onWarning }));
  const openSeen = (await first.metrics()).open;
  if (openSeen !== open) throw new Error(`expected ${open} open entries after the replay, found ${openSeen}`);
  const [, stopSeconds] = await timed(() => first.stop());
  const snapshotDir = join(config.dir, 'snapshots', 'partition-0');
  const { readdir } = await import('node:fs/promises');
  const files = (await readdir(snapshotDir)).filter((name) => name.endsWith('.snapshot'));
  if (files.length !== 1)
    throw new Error(`expected one snapshot after the stop, found ${files.join(', ') || 'none'}: ${JSON.stringify(warnings)}`);
  const snapshotBytes = (await stat(join(snapshotDir, files[0]!))).size;
  const [second, restartSeconds] = await timed(() => openRunQueue({ log: config, onWarning, snapshots: false }));
  const reopened = (await second.metrics()).open;
  await second.stop();
  if (reopened !== open || warnings.length > 0)
    throw new Error(`the restart saw ${reopened} open entries; warnings ${JSON.stringify(warnings)}`);
  return { closed, open, records, buildSeconds, replaySeconds, stopSeconds, snapshotBytes, restartSeconds };
}

export function restartRows(restart: Restart): Row[] {
  const atTarget = restart.closed >= RESTART_TARGET.closed && restart.open >= RESTART_TARGET.open;
  const size = (n: number): string => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);
  const ok = restart.restartSeconds < RESTART_TARGET.seconds;
  return [
    {
      name: `restart from a snapshot (${size(restart.closed)} closed + ${size(restart.open)} open)`,
      value: `${restart.restartSeconds.toFixed(2)} s`,
      target: `< ${RESTART_TARGET.seconds} s at ${size(RESTART_TARGET.closed)} + ${size(RESTART_TARGET.open)}`,
      verdict: atTarget ? (ok ? 'ok' : 'MISS') : ok ? 'ok (smaller)' : 'MISS',
      note: `replay of the whole log (${(restart.records / 1e6).toFixed(1)}M records) took ${restart.replaySeconds.toFixed(2)} s; the stop wrote a snapshot of ${(restart.snapshotBytes / 2 ** 20).toFixed(1)} MiB in ${restart.stopSeconds.toFixed(2)} s; log built in ${restart.buildSeconds.toFixed(1)} s${atTarget ? '' : ' (measured below the target size: RUNLOG_BENCH_RESTART_CLOSED sets the closed count)'}`,
    },
  ];
}
