/**
 * Restart: a partition holding `closed` retained closed entries and `open` open ones (inputs of
 * 100 bytes), built fast (encoded records appended straight to a one-partition file log, in big
 * batches), then opened twice: once replaying the whole log (there is no snapshot yet; the
 * queue's stop then writes one), and once more, from that snapshot (the restart). The target:
 * 10M closed + 100k open open in under 5 s, whatever the log's length.
 *
 * After the restart, its steps are run again one by one on the same files, each timed: the
 * log's open, the snapshot file's open and its envelope's head, reading it for its checksum (one
 * pass through a reused buffer: src/events/snapshot-stream.ts), the state decoded but its
 * columns (found, not read), the ticket index's columns loaded from where they lie, its tables
 * filled (one after the other here; the restart itself fills the tables of an index of 1M rows
 * or more on another thread while it loads the columns and the rest), the rest of the view (the
 * open entries folded back, answers, keys), and the tail replayed after it. The checksum, too,
 * is computed on another thread in the restart (a state of 32 MiB or more).
 *
 * `reuseDir` (`--reuse-logs DIR`): the log is built there once and kept, and later runs of the
 * same size open it again instead of building it (a 10M log takes minutes to write).
 */
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { RunlogEvent } from '../src/events/types.ts';
import type { AppendRecord, EventLog } from '../src/log/event-log.ts';
import { openLog } from '../src/log/open-log.ts';
import { openRunQueue } from '../src/queue/open-run-queue.ts';
import { readSnapshotHead, readSnapshotState, verifySnapshotChecksum } from '../src/events/snapshot-stream.ts';
import { catchUp } from '../src/projector/replay.ts';
import { sourcedColumns } from '../projections/snapshot-columns.ts';
import { TicketIndex } from '../projections/ticket-index.ts';
import { restoreView } from '../projections/view-snapshot.ts';
import type { LogConfig } from '../src/log/event-log.ts';
import type { RunlogWarning } from '../src/warnings.ts';
import type { LogSite } from './logs.ts';
import { profiled } from './profile.ts';
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
  /** CPU time this process spent in it, and the 1-minute load average right after (a shared machine's wall time is not its own). */
  restartCpuSeconds: number;
  load: number;
  /** The restart's steps run again one by one (see the top), seconds each. */
  steps: RestartSteps;
  /** Whether the log was an earlier run's, kept (reuseDir). */
  reused: boolean;
}

export interface RestartSteps {
  logOpen: number;
  read: number;
  checksum: number;
  decode: number;
  indexColumns: number;
  /** The index's columns loaded, its tables not filled. */
  index: number;
  /** Its tables filled (here, on the main thread; a restart of 1M rows or more fills them on another thread meanwhile: projections/table-fill-aside.ts). */
  tables: number;
  openEntries: number;
  tail: number;
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

/** The log at `dir`, built unless an earlier run left one of this size there (reuse). */
async function builtLog(
  config: LogConfig & { kind: 'file' },
  closed: number,
  open: number,
  reuse: boolean,
  keepSnapshot: boolean,
): Promise<[number, number, boolean]> {
  const marker = join(config.dir, 'bench-built.json');
  const size = JSON.stringify({ closed, open });
  if (reuse) {
    const found = await readFile(marker, 'utf8').catch(() => null);
    if (found !== null && JSON.parse(found).size === size) {
      // The first open replays from zero again, unless asked to keep the snapshot an earlier run's stop wrote.
      if (!keepSnapshot) await rm(join(config.dir, 'snapshots'), { recursive: true, force: true });
      return [JSON.parse(found).records as number, 0, true];
    }
    await rm(config.dir, { recursive: true, force: true });
    await mkdir(config.dir, { recursive: true });
  }
  const [records, buildSeconds] = await timed(async () => {
    const log = await openLog(config, 1);
    try {
      return await buildLog(log, closed, open);
    } finally {
      await log.close();
    }
  });
  if (reuse) await writeFile(marker, JSON.stringify({ size, records }));
  return [records, buildSeconds, false];
}

/**
 * `reuseDir`: build the log there once (see the top); `keepSnapshot` too: an earlier run's
 * snapshot there is restarted from again, the replay from zero and the stop that wrote it skipped.
 */
export async function restartTime(site: LogSite, closed: number, open: number, reuseDir?: string, keepSnapshot = false): Promise<Restart> {
  if (site.config.kind !== 'file') throw new Error('the restart bench runs on the file log (its snapshots lie beside it)');
  // Building and replaying: nothing here measures appends.
  const config = { ...site.config, ...(reuseDir === undefined ? {} : { dir: reuseDir }), fsync: false };
  const [records, buildSeconds, reused] = await builtLog(config, closed, open, reuseDir !== undefined, keepSnapshot);
  // The queues run as a deployment does, fsync on: a stop then closes the log cleanly, and the next open
  // reads no frame of the active segment but its last (src/log/file/recovery.ts: CLEAN CLOSE).
  const queueLog = { ...config, fsync: true };
  const warnings: RunlogWarning[] = [];
  const onWarning = (warning: RunlogWarning): void => void warnings.push(warning);
  const snapshotDir = join(config.dir, 'snapshots', 'partition-0');
  const snapshots = async (): Promise<string[]> =>
    (await readdir(snapshotDir).catch(() => [] as string[])).filter((name) => name.endsWith('.snapshot'));
  let [replaySeconds, stopSeconds] = [NaN, NaN];
  if (!(reused && keepSnapshot && (await snapshots()).length === 1)) {
    let first: Awaited<ReturnType<typeof openRunQueue>>;
    [first, replaySeconds] = await timed(() => openRunQueue({ log: queueLog, onWarning }));
    const openSeen = (await first.metrics()).open;
    if (openSeen !== open) throw new Error(`expected ${open} open entries after the replay, found ${openSeen}`);
    [, stopSeconds] = await timed(() => first.stop());
  }
  const files = await snapshots();
  if (files.length !== 1)
    throw new Error(`expected one snapshot after the stop, found ${files.join(', ') || 'none'}: ${JSON.stringify(warnings)}`);
  const snapshotBytes = (await stat(join(snapshotDir, files[0]!))).size;
  const cpuBefore = process.cpuUsage();
  const [second, restartSeconds] = await timed(() =>
    profiled('restart', () => openRunQueue({ log: queueLog, onWarning, snapshots: false })),
  );
  const cpu = process.cpuUsage(cpuBefore);
  const restartCpuSeconds = (cpu.user + cpu.system) / 1e6;
  const load = loadavg()[0]!;
  const reopened = (await second.metrics()).open;
  await second.stop();
  if (reopened !== open || warnings.length > 0)
    throw new Error(`the restart saw ${reopened} open entries; warnings ${JSON.stringify(warnings)}`);
  const steps = await restartSteps(queueLog, closed);
  return {
    closed,
    open,
    records,
    buildSeconds,
    replaySeconds,
    stopSeconds,
    snapshotBytes,
    restartSeconds,
    restartCpuSeconds,
    load,
    steps,
    reused,
  };
}

/** The restart's steps one by one on the same files (see the top), as the file log's open reads a snapshot (where it lies). */
async function restartSteps(config: LogConfig, closed: number): Promise<RestartSteps> {
  const [log, logOpen] = await timed(() => openLog(config, 1));
  try {
    const [stored] = await log.snapshots!.list(0);
    const [source, opened] = await timed(() => stored!.open!());
    try {
      const [head, read] = now(() => readSnapshotHead(source));
      const [, checksum] = now(() => verifySnapshotChecksum(source, head));
      const [{ state, columns: found }, decode] = now(() => readSnapshotState(source, head));
      const [view, restore] = now(() => restoreView(0, state, head.nextOffset, sourcedColumns(found, source)));
      // The index's part of restoreView, timed alone (after it, as warm as it was inside).
      const [columns, indexColumns] = now(() => sourcedColumns(found, source));
      const [index, indexSeconds] = now(() => TicketIndex.fromColumns(columns, Number(head.nextOffset), 'later'));
      const [, tables] = now(() => index.adoptTables(null));
      if (index.size !== closed) throw new Error(`the index built from the snapshot holds ${index.size} rows, not ${closed}`);
      const [, tail] = await timed(() => catchUp(log, 0, view));
      const openEntries = restore - indexColumns - indexSeconds - tables;
      return { logOpen, read: opened + read, checksum, decode, indexColumns, index: indexSeconds, tables, openEntries, tail };
    } finally {
      await source.close();
    }
  } finally {
    await log.close();
  }
}

function now<T>(body: () => T): [T, number] {
  const started = performance.now();
  const value = body();
  return [value, (performance.now() - started) / 1000];
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
      note: `CPU ${restart.restartCpuSeconds.toFixed(2)} s, load ${restart.load.toFixed(1)}; ${stepsNote(restart.steps)}; ${Number.isNaN(restart.replaySeconds) ? `the snapshot (${(restart.snapshotBytes / 2 ** 20).toFixed(1)} MiB) an earlier run's stop wrote was reused (--reuse-snapshot), no replay from zero this run` : `replay of the whole log (${(restart.records / 1e6).toFixed(1)}M records) took ${restart.replaySeconds.toFixed(2)} s; the stop wrote a snapshot of ${(restart.snapshotBytes / 2 ** 20).toFixed(1)} MiB in ${restart.stopSeconds.toFixed(2)} s`}; ${restart.reused ? 'log reused from an earlier run' : `log built in ${restart.buildSeconds.toFixed(1)} s`}${atTarget ? '' : ' (measured below the target size: --closed N sets the closed count)'}`,
    },
  ];
}

function stepsNote(steps: RestartSteps): string {
  const ms = (seconds: number): string => `${Math.round(seconds * 1000)} ms`;
  const parts = [
    `log open ${ms(steps.logOpen)}`,
    `open + head ${ms(steps.read)}`,
    `read + checksum (one pass) ${ms(steps.checksum)}`,
    `state decoded, columns found ${ms(steps.decode)}`,
    `index columns found ${ms(steps.indexColumns)}`,
    `index columns loaded ${ms(steps.index)}`,
    `its tables filled ${ms(steps.tables)} (the restart fills them on another thread meanwhile)`,
    `open entries and the rest ${ms(steps.openEntries)}`,
    `tail ${ms(steps.tail)}`,
  ];
  const sum = Object.values(steps).reduce((a, b) => a + b, 0);
  return `its steps run again one by one: ${parts.join(', ')} (sum ${sum.toFixed(2)} s)`;
}
