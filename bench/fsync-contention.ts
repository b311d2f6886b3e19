/**
 * `node --import tsx bench/fsync-contention.ts [--rate 10000] [--seconds 5] [--dir DIR]`
 *
 * How the tail of write + fdatasync moves with the CPU others use (issue 12's Worker p99): an
 * open loop queues `rate` small appends a second into a file, written and datasynced as the
 * file log's group commit does (one write and one fdatasync in flight, what arrived meanwhile
 * in the next), first on an idle machine, then beside child processes that each burn a share
 * of a core (60%, then 90% + 50%). Prints each append's latency and each fdatasync's, p50 /
 * p99 / max. Not part of `npm run bench`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fdatasync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { rate: { type: 'string', default: '10000' }, seconds: { type: 'string', default: '5' }, dir: { type: 'string' } },
});
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const dir = mkdtempSync(join(values.dir ?? os.tmpdir(), 'runlog-fsync-contention-'));

/** A child process busy `duty`% of every 10 ms. */
function burner(duty: number): ChildProcess {
  const code = `const end = Date.now() + ${(seconds + 2) * 1000};
    (function tick() { const t = performance.now(); while (performance.now() - t < ${duty / 10}) {} if (Date.now() < end) setTimeout(tick, ${(100 - duty) / 10}); })();`;
  return spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
}

function quantiles(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): string => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN).toFixed(2);
  return `p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${(sorted[sorted.length - 1] ?? NaN).toFixed(1)} ms`;
}

/** The open loop for `seconds`: append latencies and datasync durations. */
async function appendLoop(path: string): Promise<{ appends: number[]; syncs: number[] }> {
  const fd = openSync(path, 'w');
  const record = Buffer.alloc(400, 7);
  let position = 0;
  let queued: number[] = [];
  let syncing = false;
  const appends: number[] = [];
  const syncs: number[] = [];
  const flush = (): void => {
    if (syncing || queued.length === 0) return;
    const group = queued;
    queued = [];
    syncing = true;
    for (let n = 0; n < group.length; n++) position += writeSync(fd, record, 0, record.length, position);
    const began = performance.now();
    fdatasync(fd, () => {
      const now = performance.now();
      syncs.push(now - began);
      for (const at of group) appends.push(now - at);
      syncing = false;
      flush();
    });
  };
  const started = performance.now();
  let sent = 0;
  for (let now = started; now - started < seconds * 1000; now = performance.now()) {
    for (const due = Math.floor(((now - started) / 1000) * rate); sent < due; sent++) queued.push(performance.now());
    flush();
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  while (syncing || queued.length > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  closeSync(fd);
  return { appends, syncs };
}

console.log(`fsync-contention: ${rate} appends/s for ${seconds} s a run; ${os.cpus().length} cores; node ${process.version}`);
try {
  for (const [name, duties] of [
    ['idle', []],
    ['beside one process at 60%', [60]],
    ['beside two at 90% and 50%', [90, 50]],
  ] as const) {
    const burners = duties.map(burner);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { appends, syncs } = await appendLoop(join(dir, 'appends'));
    for (const child of burners) child.kill();
    console.log(
      `${name.padEnd(27)} append ${quantiles(appends)}; fdatasync ${quantiles(syncs)} (${syncs.length}); load ${os.loadavg()[0]!.toFixed(2)}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
