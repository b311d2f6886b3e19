/**
 * `node --import tsx bench/peers/runlog-alone.ts [--rounds N] [--jobs N] [--profile dir]`: the
 * runlog system of bench:peers alone (no Redis, no PostgreSQL), workload (a) only: `jobs` single
 * adds from 64 producers, then a Worker at concurrency 64 drains them. Prints each phase's rate
 * and CPU per job (process.cpuUsage, user + system), with the load average. `--profile dir`
 * CPU-profiles the enqueue and the drain phases apart (bench/profile.ts) into dir.
 * For judging a change to the Worker's CPU per job; the comparison with the peers is bench:peers.
 */
import os from 'node:os';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { profileInto, profiled } from '../profile.ts';
import { runlogSystem } from './runlog.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string' }, jobs: { type: 'string' }, profile: { type: 'string' } } });
const rounds = Number(values.rounds ?? 3);
const jobs = Number(values.jobs ?? 20_000);
profileInto(values.profile);
const PRODUCERS = 64;
const CONCURRENCY = 64;

const root = await mkdtemp(join(os.tmpdir(), 'runlog-alone-'));
try {
  const system = runlogSystem(root);
  for (let round = 1; round <= rounds; round++) {
    const queue = await system.open();
    try {
      let next = 0;
      const enqueue = await measured(`enqueue-${round}`, () =>
        Promise.all(
          Array.from({ length: PRODUCERS }, async () => {
            while (next < jobs) await queue.add(next++);
          }),
        ),
      );
      const drain = await measured(
        `drain-${round}`,
        () =>
          new Promise<void>((resolve, reject) => {
            let done = 0;
            queue.startWorker(CONCURRENCY, () => ++done === jobs && resolve()).catch(reject);
          }),
      );
      const load = os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ');
      console.log(`round ${round}: enqueue ${enqueue}; drain ${drain} (load ${load})`);
    } finally {
      await queue.close();
    }
  }
} finally {
  await rm(root, { recursive: true, force: true });
}

async function measured(name: string, body: () => Promise<unknown>): Promise<string> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await profiled(name, body);
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const cpuUs = (used.user + used.system) / jobs;
  return `${Math.round(jobs / (ms / 1000)).toLocaleString('en-US')}/s, ${cpuUs.toFixed(1)} µs CPU per job`;
}
