/**
 * `npm run bench [-- --log file|memory|kafka] [--quick] [--only memory,memory-closed,lifecycle,raw,latency,worker,batch,remote,replay,restart,cluster] [--profile dir] [--partitions N] [--nodes 1,2,3] [--closed N] [--reuse-logs DIR [--reuse-snapshot]] [--input-bytes N] [--frame-records N]`
 *
 * `memory-closed` and `restart` run at 10M retained closed entries + 100k open (the targets'
 * size; `--closed N` for another, `--quick` 1M and 100k); `--reuse-logs DIR` keeps the logs they
 * build under DIR and opens them again in a later run of the same size instead of building them;
 * with `--reuse-snapshot` too, restart reopens the snapshot an earlier run's stop wrote there
 * (skipping the replay from zero that writes it).
 *
 * `replay` writes inputs of 22 bytes (a small JSON job); `--input-bytes N` writes N instead (V8
 * keeps an array of up to 64 bytes on its own heap: a larger input costs a decode more). Its log
 * is written in frames of 8,192 records; `--frame-records N` writes N a frame, as a service's group
 * commits do (~10 with 64 callers on 8 partitions; 1 on a quiet queue): a frame costs a replay its
 * CRC, its checks and a walk of its records' headers.
 *
 * `lifecycle` runs 64 lifecycle callers twice (bench/throughput.ts): leasing with takeStarted (3
 * durable commands a lifecycle), then with take and startAttempt (4); the target is printed on both.
 *
 * `worker` runs the Worker (bench/worker.ts): enqueue then drain, closed-loop lifecycles, and
 * submit-to-handler-start at half its closed-loop rate; `batch` the batch submit in chunks of 1,000
 * (by 1 caller, then 4), each beside its raw ceiling (the same records straight to the log).
 *
 * `--nodes` (Kafka only; alone it runs only `cluster`): for each node count, that many `runlog
 * serve --group` child processes on a fresh topic of `--partitions` partitions (default 6, so 1,
 * 2 and 3 nodes own equal shares), and the aggregate lifecycles/s of 64 callers in this process
 * through the client (bench/cluster/cluster-rate.ts).
 *
 * `remote` runs the lifecycles through the HTTP client against an in-process server (and
 * the in-process lifecycles too, for the ratio, if `lifecycle` is not run), then submit-to-start
 * through a Worker in a child process at half the remote rate (remote.ts).
 *
 * `--partitions` applies to the lifecycle, raw, latency and remote runs. Default 1, on every backend
 * (the file log's and a new Kafka topic's own default), so the backends are measured on the same
 * layout. On Kafka every partition is a transaction stream of its own, so more partitions split
 * the 64 callers into more, smaller transactions; the Kafka run also prints its lifecycles/s on
 * 8 partitions (a cluster's topic) in the same run, without a target, with the transactions and
 * records per transaction of both (bench/kafka-partitions.ts interleaves more counts). Before
 * measuring Kafka (not with --quick) the bench warms the broker's JVM up (warm-up.ts).
 *
 * Runs the benchmarks on one log backend (default: the embedded file log, fsync on, in a
 * temporary directory) and prints each figure beside its target. Memory runs first, while
 * the heap is fresh. Needs `node --expose-gc` for the memory figure (the npm script sets it).
 */
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createLogSite, type LogKind, type LogSite } from './logs.ts';
import {
  latencyRow,
  lifecycleRows,
  lifecycleTargetsFor,
  memoryRows,
  memoryClosedRows,
  remoteLatencyRow,
  remoteRows,
  replayRows,
  spreadRow,
  clusterRow,
  type Row,
} from './rows.ts';
import { remoteLifecycleRate, remoteSubmitToStart } from './remote.ts';
import { lifecycleRate, rawAppendRate, type Rate } from './throughput.ts';
import { submitToTakeLatency } from './latency.ts';
import { latencyFloor } from './latency-floor.ts';
import { batchFigure, loadNow, workerClosedLoopRate, workerDrainRate, workerLatency, workerRows, type BatchFigure } from './worker.ts';
import { FRAME_RECORDS, replaySpeed } from './replay.ts';
import { RESTART_TARGET, restartRows, restartTime } from './restart.ts';
import { memoryPerEntry } from './memory.ts';
import { memoryPerClosedEntry } from './memory-closed.ts';
import { profileInto } from './profile.ts';
import { warmUp } from './warm-up.ts';
import { clusterLifecycleRate, parseNodeCounts } from './cluster/cluster-rate.ts';

const BENCHES = ['memory', 'memory-closed', 'lifecycle', 'raw', 'latency', 'worker', 'batch', 'remote', 'replay', 'restart'] as const;
const CLUSTER_PARTITIONS = 6;
/** The Kafka run's comparison: lifecycles on a topic of this many partitions, beside the measured layout. */
const SPREAD_PARTITIONS = 8;
const CALLERS = 64;
/** The batch submit by one caller, then by 4 at once (each beside its raw ceiling). */
const BATCH_CALLERS = [1, 4];

const { values } = parseArgs({
  options: {
    log: { type: 'string', default: 'file' },
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    profile: { type: 'string' },
    partitions: { type: 'string' },
    nodes: { type: 'string' },
    closed: { type: 'string' },
    'reuse-logs': { type: 'string' },
    'reuse-snapshot': { type: 'boolean', default: false },
    'input-bytes': { type: 'string' },
    'frame-records': { type: 'string' },
  },
});
const kind = values.log as LogKind;
if (!['file', 'memory', 'kafka'].includes(kind)) throw new Error(`--log must be file, memory or kafka, got ${kind}`);
profileInto(values.profile);
const partitions = values.partitions === undefined ? 1 : Number(values.partitions);
if (partitions !== undefined && !(Number.isInteger(partitions) && partitions >= 1))
  throw new Error(`--partitions must be a positive integer, got ${values.partitions}`);
const only = new Set<string>(values.only === undefined ? (values.nodes === undefined ? BENCHES : ['cluster']) : values.only.split(','));
const nodeCounts = only.has('cluster') ? parseNodeCounts(values.nodes ?? '1,2,3') : [];
if (nodeCounts.length > 0 && kind !== 'kafka') throw new Error(`--nodes (the cluster run) needs --log kafka, got --log ${kind}`);
const quick = values.quick;
/** `--closed N`: the closed entries of memory-closed and restart (default 10M, the target's size; 1M and 100k with --quick). */
const closedFlag = values.closed === undefined ? undefined : Number(values.closed);
if (closedFlag !== undefined && !(Number.isInteger(closedFlag) && closedFlag >= 1))
  throw new Error(`--closed must be a positive integer, got ${values.closed}`);
/** `--input-bytes N`: the replay's inputs (default: bench/throughput.ts INPUT). */
const inputBytes = values['input-bytes'] === undefined ? undefined : Number(values['input-bytes']);
if (inputBytes !== undefined && !(Number.isInteger(inputBytes) && inputBytes >= 0 && inputBytes <= 1 << 20))
  throw new Error(`--input-bytes must be an integer from 0 to 1048576, got ${values['input-bytes']}`);
/** `--frame-records N`: the replay's log written N records a frame (default FRAME_RECORDS: big batches; a service writes ~10, a quiet queue 1). */
const frameRecords = values['frame-records'] === undefined ? FRAME_RECORDS : Number(values['frame-records']);
if (!(Number.isInteger(frameRecords) && frameRecords >= 1 && frameRecords <= FRAME_RECORDS))
  throw new Error(`--frame-records must be an integer from 1 to ${FRAME_RECORDS}, got ${values['frame-records']}`);
/** `--reuse-logs DIR`: memory-closed and restart build their logs under DIR once and open them again in later runs of the same size. */
const reuseLogs = values['reuse-logs'];
function keptFileSite(name: string): LogSite {
  return { config: { kind: 'file', dir: join(reuseLogs!, name), fsync: true }, remove: async () => {} };
}
const durationMs = quick ? 1_500 : 5_000;
const warmupMs = quick ? 300 : 1_000;

async function on<T>(name: string, body: (site: LogSite) => Promise<T>, onPartitions = partitions): Promise<T> {
  const site = await createLogSite(kind, name, onPartitions);
  try {
    return await body(site);
  } finally {
    await site.remove();
  }
}

function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

const rows: Row[] = [];
const targets = lifecycleTargetsFor(kind);
let lifecycle: Rate | undefined;
let lifecycleStarted: Rate | undefined;

if (only.has('memory')) {
  const count = quick ? 20_000 : 100_000;
  progress(`memory: ${count} open entries`);
  rows.push(...memoryRows(await on('memory', (site) => memoryPerEntry(site, count))));
}
if (only.has('memory-closed')) {
  // Written straight to two file logs whatever --log says: the memory log would hold the records in this process.
  const closed = closedFlag ?? Number(process.env.RUNLOG_BENCH_CLOSED ?? (quick ? 1_000_000 : 10_000_000));
  progress(`memory-closed: ${closed} closed + 100000 open entries (file logs)`);
  const openOnly = reuseLogs === undefined ? await createLogSite('file', 'memory-open') : keptFileSite('memory-open');
  const big = reuseLogs === undefined ? await createLogSite('file', 'memory-closed') : keptFileSite(`memory-closed-${closed}`);
  try {
    rows.push(...memoryClosedRows(await memoryPerClosedEntry(openOnly, big, closed, 100_000, reuseLogs !== undefined)));
  } finally {
    await Promise.all([openOnly.remove(), big.remove()]);
  }
}
let warmUpNote = kind === 'kafka' && quick ? '; quick: the broker was not warmed up first (a cold broker runs several times slower)' : '';
if (kind === 'kafka' && !quick && (only.has('lifecycle') || only.has('latency') || only.has('raw') || only.has('cluster'))) {
  progress('warming the broker up (windows of 5 s until the rate stops rising)');
  const warm = await warmUp(kind, partitions, CALLERS, progress);
  warmUpNote = `; after a broker warm-up of ${warm.seconds.toFixed(0)} s (lifecycles/s per 5 s window: ${warm.windows.join(', ')})`;
}
if (only.has('lifecycle') || only.has('latency') || only.has('remote')) {
  progress(`lifecycle: ${CALLERS} callers for ${durationMs} ms`);
  lifecycle = await on('lifecycle', (site) => lifecycleRate(site, CALLERS, durationMs, warmupMs));
}
if (only.has('lifecycle')) {
  progress(`lifecycle with takeStarted: ${CALLERS} callers for ${durationMs} ms`);
  lifecycleStarted = await on('lifecycle-started', (site) => lifecycleRate(site, CALLERS, durationMs, warmupMs, 'take-started'));
}
if (only.has('raw')) {
  progress(`raw append: ${CALLERS} callers for ${durationMs} ms`);
  const raw = await on('raw', (site) => rawAppendRate(site, CALLERS, durationMs, warmupMs));
  rows.push(...lifecycleRows(lifecycle, lifecycleStarted, raw, targets));
} else if (lifecycle !== undefined && only.has('lifecycle')) {
  rows.push(...lifecycleRows(lifecycle, lifecycleStarted, undefined, targets));
}
if (kind === 'kafka' && only.has('lifecycle') && partitions !== SPREAD_PARTITIONS) {
  progress(`lifecycle on ${SPREAD_PARTITIONS} partitions: ${CALLERS} callers for ${durationMs} ms`);
  const spread = await on('lifecycle-spread', (site) => lifecycleRate(site, CALLERS, durationMs, warmupMs), SPREAD_PARTITIONS);
  rows.push(spreadRow(spread, SPREAD_PARTITIONS));
}
if (only.has('latency') && lifecycle !== undefined) {
  const perSecond = Math.max(1, Math.round(lifecycle.perSecond / 2));
  progress(`latency: ${perSecond} submits/s (half of ${Math.round(lifecycle.perSecond)} lifecycles/s) for ${durationMs} ms`);
  rows.push(latencyRow(await on('latency', (site) => submitToTakeLatency(site, perSecond, CALLERS, durationMs, warmupMs)), targets));
}
if (only.has('worker')) {
  const count = quick ? 5_000 : 20_000;
  progress(`worker: ${count} entries enqueued by 64 producers, then drained at concurrency 64`);
  const drain = await on('worker-drain', (site) => workerDrainRate(site, count));
  const drainLoad = loadNow();
  progress(`worker: ${CALLERS} callers awaiting their entries' closes for ${durationMs} ms`);
  const closedLoop = await on('worker-loop', (site) => workerClosedLoopRate(site, durationMs, warmupMs));
  const closedLoopLoad = loadNow();
  const perSecond = Math.max(1, Math.round(closedLoop.perSecond / 2));
  progress(`worker latency: ${perSecond} submits/s (half of ${Math.round(closedLoop.perSecond)}) for ${durationMs} ms`);
  const latency = await on('worker-latency', (site) => workerLatency(site, perSecond, durationMs, warmupMs));
  progress(`worker latency floor: the log alone at ${perSecond}/s for ${durationMs} ms`);
  latency.floor = await on('worker-latency-floor', (site) => latencyFloor(site, perSecond, durationMs, warmupMs));
  latency.floorLoad = loadNow();
  rows.push(...workerRows({ drain, closedLoop, drainLoad, closedLoopLoad }, latency));
}
if (only.has('batch')) {
  const figures: BatchFigure[] = [];
  for (const callers of BATCH_CALLERS) {
    progress(`batch submit: chunks of 1,000 by ${callers} caller(s) for ${durationMs} ms, then the raw ceiling`);
    figures.push(await batchFigure(on, callers, durationMs, warmupMs));
  }
  rows.push(...workerRows(undefined, undefined, figures));
}
if (only.has('remote') && lifecycle !== undefined) {
  progress(`remote lifecycle: ${CALLERS} callers through the HTTP client for ${durationMs} ms`);
  const remote = await on('remote', (site) => remoteLifecycleRate(site, CALLERS, durationMs, warmupMs));
  rows.push(...remoteRows(remote, lifecycle));
  const perSecond = Math.max(1, Math.round(remote.perSecond / 2));
  progress(
    `remote latency: ${perSecond} submits/s (half of ${Math.round(remote.perSecond)}) to a Worker in a child process for ${durationMs} ms`,
  );
  rows.push(remoteLatencyRow(await on('remote-latency', (site) => remoteSubmitToStart(site, perSecond, CALLERS, durationMs, warmupMs))));
}
if (nodeCounts.length > 0) {
  const clusterPartitions = values.partitions === undefined ? CLUSTER_PARTITIONS : partitions;
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  for (const nodes of nodeCounts) {
    const run = { brokers, partitions: clusterPartitions, callers: CALLERS, durationMs, warmupMs, progress };
    rows.push(clusterRow(await clusterLifecycleRate(nodes, run), CALLERS));
  }
}
if (only.has('replay')) {
  const lifecycles = quick ? 25_000 : 250_000;
  progress(`replay: building a log of ${lifecycles * 4} events`);
  const input = inputBytes === undefined ? undefined : Buffer.alloc(inputBytes, 'x');
  rows.push(...replayRows(await on('replay', (site) => replaySpeed(site, lifecycles, input, frameRecords))));
}
if (only.has('restart') && kind === 'file') {
  const closed = closedFlag ?? Number(process.env.RUNLOG_BENCH_RESTART_CLOSED ?? (quick ? 100_000 : RESTART_TARGET.closed));
  const open = quick ? 10_000 : RESTART_TARGET.open;
  progress(`restart: a partition of ${closed} closed + ${open} open entries, replayed, snapshotted on stop, reopened`);
  const reuseDir = reuseLogs === undefined ? undefined : join(reuseLogs, `restart-${closed}-${open}`);
  rows.push(...restartRows(await on('restart', (site) => restartTime(site, closed, open, reuseDir, values['reuse-snapshot']))));
}

const load = os
  .loadavg()
  .map((n) => n.toFixed(2))
  .join(' ');
console.log(
  `\nrunlog bench — log: ${kind}${kind === 'file' ? ' (fsync on)' : ''}${quick ? ', quick' : ''}, ${partitions} partition${partitions === 1 ? '' : 's'}; node ${process.version}; ${os.cpus().length} cores; load ${load}${warmUpNote}`,
);
const widths = [0, 1, 2, 3].map((i) =>
  Math.max(...[['figure', 'measured', 'target', ''], ...rows.map((r) => [r.name, r.value, r.target, r.verdict])].map((r) => r[i]!.length)),
);
const line = (cells: string[]): string =>
  cells
    .map((cell, i) => (i === 1 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
    .join('  ')
    .trimEnd();
console.log(line(['figure', 'measured', 'target', '']));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const row of rows) console.log(line([row.name, row.value, row.target, row.verdict]));
for (const row of rows) if (row.note) console.log(`  ${row.name}: ${row.note}`);
if (nodeCounts.length > 0) {
  console.log(
    `  cluster: the nodes, the broker and the bench's callers all share this machine's ${os.cpus().length} cores, so a second or third node adds processes, not CPU: here the aggregate cannot grow with the node count, and what the rows show is what spreading the partitions over processes costs (more HTTP hops, more producers and transactions on one broker). With a machine per node, each node serves its share of partitions on cores of its own: expect the aggregate to grow with the nodes until the broker's transaction work (a transaction stream per partition) bounds it.`,
  );
}
