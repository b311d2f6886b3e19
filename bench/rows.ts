/** The bench table's rows: each figure formatted beside its target. */
import type { Latency } from './latency.ts';
import type { RemoteLatency } from './remote.ts';
import type { MemoryPerEntry } from './memory.ts';
import type { MemoryPerClosedEntry } from './memory-closed.ts';
import type { Replay } from './replay.ts';
import { commandsPerLifecycle, type Rate } from './throughput.ts';
import type { ClusterRate } from './cluster/cluster-rate.ts';

export interface Row {
  name: string;
  value: string;
  target: string;
  /** 'ok', 'MISS' or '' (no target). */
  verdict: string;
  note?: string;
}

const TARGETS = {
  lifecyclesPerSecond: 20_000,
  lifecycleToRaw: 0.5,
  p99Ms: 10,
  replayPerSecond: 500_000,
  replayToDecode: 0.5,
  bytesPerEntry: 1024,
  bytesPerClosedEntry: 64,
  remoteToInProcess: 0.5,
};

/** Targets of the lifecycle runs: the embedded log's, or Kafka's (5,000 lifecycles/s, no latency target). */
export interface LifecycleTargets {
  lifecyclesPerSecond: number;
  p99Ms: number | null;
}

export function lifecycleTargetsFor(kind: string): LifecycleTargets {
  return kind === 'kafka'
    ? { lifecyclesPerSecond: 5_000, p99Ms: null }
    : { lifecyclesPerSecond: TARGETS.lifecyclesPerSecond, p99Ms: TARGETS.p99Ms };
}

function perSecond(n: number): string {
  return `${Math.round(n).toLocaleString('en-US')}/s`;
}

function commits(rate: Rate): string {
  if (rate.records === undefined) return '';
  if (rate.transactions !== undefined && rate.transactions > 0)
    return `; ${perSecond(rate.transactions / rate.seconds)} transactions, ${(rate.records / rate.transactions).toFixed(1)} records per transaction`;
  if (rate.fsyncs === undefined || rate.fsyncs === 0) return '';
  return `; ${perSecond(rate.fsyncs / rate.seconds)} fsyncs, ${(rate.records / rate.fsyncs).toFixed(1)} records per fsync`;
}

function verdict(ok: boolean): string {
  return ok ? 'ok' : 'MISS';
}

/** "; CPU 92.1 µs per lifecycle; load 1.20 1.10 0.90" where measured. */
function cpuAndLoad(rate: Rate): string {
  const cpu = rate.cpuUsPerItem === undefined ? '' : `; CPU ${rate.cpuUsPerItem.toFixed(1)} µs per lifecycle (this process)`;
  return `${cpu}${rate.load === undefined ? '' : `; load ${rate.load}`}`;
}

export function lifecycleRows(
  lifecycle: Rate | undefined,
  started: Rate | undefined,
  raw: Rate | undefined,
  targets: LifecycleTargets,
): Row[] {
  const rows: Row[] = [];
  if (started !== undefined)
    rows.push(lifecycleRow('lifecycles (64 callers, takeStarted)', started, commandsPerLifecycle('take-started'), targets));
  if (lifecycle !== undefined)
    rows.push(lifecycleRow('lifecycles (64 callers, take + startAttempt)', lifecycle, commandsPerLifecycle('take-then-start'), targets));
  if (raw !== undefined) {
    rows.push({
      name: 'raw appends (same bytes, 64 callers)',
      value: perSecond(raw.perSecond),
      target: '',
      verdict: '',
      note: `events/s, one record per append, straight to the log${commits(raw)}; each caller appends a lifecycle's 4 records one after the other, as a lifecycle caller makes its 4 durable commands, so the ceiling of lifecycles at this run's append latency is raw ÷ 4 = ${perSecond(raw.perSecond / 4)}`,
    });
    if (lifecycle !== undefined) {
      const ratio = (lifecycle.perSecond * 4) / raw.perSecond;
      rows.push({
        name: 'lifecycle events / raw events',
        value: ratio.toFixed(2),
        target: `>= ${TARGETS.lifecycleToRaw}`,
        verdict: verdict(ratio >= TARGETS.lifecycleToRaw),
      });
    }
  }
  return rows;
}

/**
 * A lifecycle run's row: `commands` durable commands per lifecycle (submit, takeStarted, close;
 * or submit, take, startAttempt, close), 4 events either way.
 */
function lifecycleRow(name: string, rate: Rate, commands: number, targets: LifecycleTargets): Row {
  return {
    name,
    value: perSecond(rate.perSecond),
    target: `>= ${perSecond(targets.lifecyclesPerSecond)}`,
    verdict: verdict(rate.perSecond >= targets.lifecyclesPerSecond),
    note: `${rate.count} lifecycles in ${rate.seconds.toFixed(1)} s = ${perSecond(rate.perSecond * 4)} events, ${perSecond(rate.perSecond * commands)} commands (${commands} a lifecycle)${commits(rate)}${cpuAndLoad(rate)}`,
  };
}

/** Lifecycles/s on more partitions than the measured layout (Kafka: a cluster's topic), measured in the same run: shown beside it, without a target. */
export function spreadRow(rate: Rate, partitions: number): Row {
  return {
    name: `lifecycles on ${partitions} partitions`,
    value: perSecond(rate.perSecond),
    target: '',
    verdict: '',
    note: `the same 64 callers spread over ${partitions} partitions, each a transaction stream of its own: more transactions, each smaller${commits(rate)}`,
  };
}

export function latencyRow(latency: Latency, targets: LifecycleTargets): Row {
  const p99Ms = targets.p99Ms;
  return {
    name: 'submit-to-take p50 / p99',
    value: `${latency.p50Ms.toFixed(2)} / ${latency.p99Ms.toFixed(2)} ms`,
    target: p99Ms === null ? '' : `p99 < ${p99Ms} ms`,
    verdict: p99Ms === null ? '' : verdict(latency.p99Ms < p99Ms),
    note: `offered ${perSecond(latency.offeredPerSecond)}, submitted ${perSecond(latency.achievedPerSecond)}, ${latency.samples} samples, max ${latency.maxMs.toFixed(1)} ms; event-loop delay p99 ${latency.loopDelayP99Ms.toFixed(1)} ms, max ${latency.loopDelayMaxMs.toFixed(1)} ms`,
  };
}

export function replayRows(replay: Replay): Row[] {
  const ratio = replay.replayToDecode;
  const over = replay.rounds.length === 1 ? '' : `, medians of ${replay.rounds.length} rounds`;
  const each = replay.rounds
    .map(
      (round) =>
        `${perSecond(round.replayPerSecond)} ÷ ${perSecond(round.decodePerSecond)} = ${(round.replayPerSecond / round.decodePerSecond).toFixed(2)}`,
    )
    .join('; ');
  return [
    {
      name: `replay (cold start, ${(replay.events / 1e6).toFixed(2)}M events, inputs of ${replay.inputBytes} B, ${replay.frameRecords} records a frame${over})`,
      value: perSecond(replay.replayPerSecond),
      target: `>= ${perSecond(TARGETS.replayPerSecond)}`,
      verdict: verdict(replay.replayPerSecond >= TARGETS.replayPerSecond),
      note:
        `cold start ${replay.coldStartSeconds.toFixed(2)} s (of which opening the log alone, after a clean close: ${replay.openSeconds.toFixed(2)} s` +
        (replay.crashOpenSeconds === null
          ? ''
          : `; as after a crash, scanning the active segments: ${replay.crashOpenSeconds.toFixed(2)} s`) +
        `), ${replay.entries} entries; log built in ${replay.buildSeconds.toFixed(1)} s; raw read ${perSecond(replay.readPerSecond)}`,
    },
    { name: 'raw decode (decodeEvent only)', value: perSecond(replay.decodePerSecond), target: '', verdict: '' },
    {
      name: 'replay CPU per event',
      value: `${replay.cpu.coldStart.toFixed(2)} µs`,
      target: '',
      verdict: '',
      note: `read (as replay reads) ${replay.cpu.read.toFixed(2)} µs + decode ${replay.cpu.decode.toFixed(2)} µs + the rest (fold, open) ${(replay.cpu.coldStart - replay.cpu.read - replay.cpu.decode).toFixed(2)} µs`,
    },
    {
      name: `replay / raw decode${replay.rounds.length === 1 ? '' : ' (median of rounds)'}`,
      value: ratio.toFixed(2),
      target: `>= ${TARGETS.replayToDecode}`,
      verdict: verdict(ratio >= TARGETS.replayToDecode),
      note: `each round, a decode alone then a cold start: ${each}`,
    },
  ];
}

export function memoryRows(memory: MemoryPerEntry): Row[] {
  const bytes = (n: number): string => `${Math.round(n)} B`;
  return [
    {
      name: `heap per open entry (${memory.entries / 1000}k)`,
      value: bytes(memory.heapPerEntry),
      target: `<= ${bytes(TARGETS.bytesPerEntry)}`,
      verdict: verdict(memory.heapPerEntry <= TARGETS.bytesPerEntry),
      note: `input ${memory.inputBytes} B subtracted${memory.gcForced ? '' : '; GC NOT forced (run with node --expose-gc): figure unreliable'}`,
    },
    {
      name: 'RSS per open entry',
      value: bytes(memory.rssPerEntry),
      target: `<= ${bytes(TARGETS.bytesPerEntry)}`,
      verdict: verdict(memory.rssPerEntry <= TARGETS.bytesPerEntry),
      note: `per entry: heapTotal (used and free) ${bytes(memory.heapTotalPerEntry)}, off-heap ArrayBuffers ${bytes(memory.arrayBuffersPerEntry)}`,
    },
  ];
}

/** Memory per retained closed entry (the ticket index) against its target, and per open entry beside it. */
export function memoryClosedRows(memory: MemoryPerClosedEntry): Row[] {
  const bytes = (n: number): string => `${n.toFixed(1)} B`;
  const scale = `${(memory.closed / 1e6).toLocaleString('en-US')}M closed + ${memory.open / 1000}k open, inputs ${memory.inputBytes} B`;
  return [
    {
      name: `RSS per retained closed entry (${scale})`,
      value: bytes(memory.rssPerClosed),
      target: `<= ${TARGETS.bytesPerClosedEntry} B`,
      verdict: verdict(memory.rssPerClosed <= TARGETS.bytesPerClosedEntry),
      note: `heap ${bytes(memory.heapPerClosed)}, ArrayBuffers (the index's typed arrays) ${bytes(memory.arrayBuffersPerClosed)}; opening the log took ${memory.openSeconds.toFixed(1)} s, writing it ${memory.buildSeconds.toFixed(0)} s${memory.gcForced ? '' : '; GC NOT forced (run with node --expose-gc): figure unreliable'}`,
    },
    {
      name: `RSS per open entry beside them, beyond its input`,
      value: `${Math.round(memory.rssPerOpen)} B`,
      target: `<= ${TARGETS.bytesPerEntry} B`,
      verdict: verdict(memory.rssPerOpen <= TARGETS.bytesPerEntry),
      note: `the open-only log's queue: its whole RSS growth / ${memory.open} open entries, less ${memory.inputBytes} B each`,
    },
  ];
}

/** The remote run: lifecycles/s through the client beside the in-process figure of the same run, and their ratio. */
export function remoteRows(remote: Rate, inProcess: Rate): Row[] {
  const ratio = remote.perSecond / inProcess.perSecond;
  return [
    {
      name: 'remote lifecycles (64 callers, client over HTTP)',
      value: perSecond(remote.perSecond),
      target: '',
      verdict: '',
      note: `${remote.count} lifecycles in ${remote.seconds.toFixed(1)} s through connect() to an in-process startServer on loopback (4 HTTP requests each); in-process in the same run: ${perSecond(inProcess.perSecond)}`,
    },
    {
      name: 'remote / in-process lifecycles',
      value: ratio.toFixed(2),
      target: `>= ${TARGETS.remoteToInProcess}`,
      verdict: verdict(ratio >= TARGETS.remoteToInProcess),
    },
  ];
}

export function remoteLatencyRow(latency: RemoteLatency): Row {
  return {
    name: 'remote submit-to-start p50 / p99',
    value: `${latency.p50Ms.toFixed(2)} / ${latency.p99Ms.toFixed(2)} ms`,
    target: '',
    verdict: '',
    note: `a Worker over the client in a child process, submits through a client at ${perSecond(latency.offeredPerSecond)} (half the remote lifecycles/s; submitted ${perSecond(latency.achievedPerSecond)}), ${latency.samples} samples, max ${latency.maxMs.toFixed(1)} ms${latency.unstarted === 0 ? '' : `, ${latency.unstarted} not started by the end`}`,
  };
}

/** One node count's aggregate lifecycles/s through the client (bench/cluster/cluster-rate.ts), without a target. */
export function clusterRow(rate: ClusterRate, callers: number): Row {
  const mode = rate.grouped ? `runlog serve --group` : 'one runlog serve without --group';
  return {
    name: `cluster lifecycles, ${rate.nodes} node${rate.nodes === 1 ? '' : 's'} (${rate.partitions} partitions)`,
    value: perSecond(rate.perSecond),
    target: '',
    verdict: '',
    note: `${rate.count} lifecycles in ${rate.seconds.toFixed(1)} s, ${callers} callers in the bench process through one client; ${mode}${clusterTrouble(rate)}`,
  };
}

function clusterTrouble(rate: ClusterRate): string {
  const [from, to] = rate.generations;
  const moved = from === to ? '' : `; the group rebalanced during the window (generation ${from} to ${to})`;
  const failed = rate.failed === 0 ? '' : `; ${rate.failed} lifecycles cut short by retriable failures (${rate.failures.join(' | ')})`;
  return moved + failed;
}
