/**
 * `npm run bench:peers [-- --quick] [--rounds N] [--jobs N] [--warmup-rounds N]`: runlog beside
 * BullMQ and Graphile Worker on the same two workloads (workloads.ts), rounds interleaved (each
 * round runs every system in turn, starting one system later each round) so the ratios come from
 * the same minutes. Before the counted rounds, warm-up rounds (default 1; none with --quick) run
 * every system once on both workloads, smaller, and count nothing: every system's client code in
 * this process (runlog's whole queue, BullMQ's ioredis, Graphile's pg) is compiled by the JIT
 * before anything is timed, as in a process that has been serving a while. Prints a Markdown
 * table of the medians over rounds and runlog ÷ each peer, with the date and the load average. The npm script first runs install.ts (Debian packages, npm) and
 * typechecks bench/peers. Servers and files live in temporary directories, stopped and removed
 * at the end, on failure and on Ctrl-C.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bullmqSystem } from './bullmq.ts';
import { graphileSystem } from './graphile.ts';
import { startPostgres } from './postgres-server.ts';
import { startRedis } from './redis-server.ts';
import { runlogSystem } from './runlog.ts';
import { Scope } from './scope.ts';
import type { PeerSystem } from './system.ts';
import { peerTable, targetLines, type RoundFigures } from './table.ts';
import { closedLoop, enqueueThenDrain, type Shape } from './workloads.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    jobs: { type: 'string' },
    'warmup-rounds': { type: 'string' },
  },
});
const quick = values.quick ?? false;
const rounds = Number(values.rounds ?? (quick ? 1 : 3));
const warmupRounds = Number(values['warmup-rounds'] ?? (quick ? 0 : 1));
const shape: Shape = {
  jobs: Number(values.jobs ?? (quick ? 5_000 : 20_000)),
  producers: 64,
  concurrency: 64,
  callers: 64,
  windowMs: quick ? 3_000 : 10_000,
  warmupMs: quick ? 1_000 : 3_000,
};
for (const [name, value] of Object.entries({ rounds, jobs: shape.jobs })) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got ${String(value)}`);
}
if (!Number.isInteger(warmupRounds) || warmupRounds < 0)
  throw new Error(`--warmup-rounds must be a whole number, got ${String(warmupRounds)}`);
/** A warm-up round's shape: the same workloads, smaller (it only has to get every system's code compiled). */
const warmupShape: Shape = { ...shape, jobs: Math.min(shape.jobs, 5_000), windowMs: 2_000, warmupMs: 1_000 };

/** Issue 12's targets are against this one: BullMQ's usual setup. */
const EVERYSEC = 'BullMQ, Redis AOF everysec';

const scope = new Scope();
scope.closeOnExit();
try {
  const systems = await startSystems(scope);
  const loadBefore = os.loadavg();
  const started = new Date();
  await warmUp(systems);
  const figures = await measure(systems);
  console.log(`\nbench:peers, ${started.toISOString().slice(0, 16).replace('T', ' ')}–${new Date().toISOString().slice(11, 16)} UTC`);
  console.log(`${os.cpus().length} cores; load average ${format(loadBefore)} before, ${format(os.loadavg())} after (1, 5, 15 min)`);
  console.log(
    `${rounds} round(s); (a) ${shape.jobs.toLocaleString('en-US')} jobs from ${shape.producers} producers, then a worker at concurrency ${shape.concurrency}; ` +
      `(b) ${shape.callers} callers in a closed loop, ${shape.windowMs / 1000} s window after ${shape.warmupMs / 1000} s warm-up; medians over rounds; ` +
      `before them ${warmupRounds} uncounted warm-up round(s) of every system (${warmupShape.jobs.toLocaleString('en-US')} jobs, ${warmupShape.windowMs / 1000} s window)\n`,
  );
  console.log(peerTable(figures));
  console.log(`\n${targetLines(figures, EVERYSEC, ['drain', 'enqueueThenDrain'], 2).join('\n')}`);
} finally {
  await scope.close();
}

async function startSystems(scope: Scope): Promise<PeerSystem[]> {
  const root = await mkdtemp(join(os.tmpdir(), 'runlog-peers-'));
  scope.defer(() => rm(root, { recursive: true, force: true }));
  const redisDir = async (name: string): Promise<string> => mkdtemp(join(root, `redis-${name}-`));
  const everysec = await startRedis(await redisDir('everysec'), 'everysec', scope);
  const always = await startRedis(await redisDir('always'), 'always', scope);
  const postgres = await startPostgres(scope);
  return [runlogSystem(root), bullmqSystem(EVERYSEC, everysec), bullmqSystem('BullMQ, Redis AOF always', always), graphileSystem(postgres)];
}

/** Runs every system on both workloads `warmupRounds` times, counting nothing. */
async function warmUp(systems: readonly PeerSystem[]): Promise<void> {
  for (let round = 0; round < warmupRounds; round++) {
    for (const system of systems) {
      await enqueueThenDrain(system, warmupShape);
      await closedLoop(system, warmupShape);
      console.error(`warm-up ${round + 1}/${warmupRounds} ${system.name} (load ${format(os.loadavg())})`);
    }
  }
}

/** Every round runs every system (a then b), starting one system later each round. */
async function measure(systems: readonly PeerSystem[]): Promise<Map<string, RoundFigures[]>> {
  const figures = new Map(systems.map((s) => [s.name, [] as RoundFigures[]]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < systems.length; i++) {
      const system = systems[(round + i) % systems.length]!;
      const a = await enqueueThenDrain(system, shape);
      const b = await closedLoop(system, shape);
      const row = { enqueue: a.enqueuePerSecond, drain: a.drainPerSecond, enqueueThenDrain: a.overallPerSecond, closedLoop: b };
      figures.get(system.name)!.push(row);
      console.error(
        `round ${round + 1}/${rounds} ${system.name}: ${Object.entries(row)
          .map(([k, v]) => `${k} ${Math.round(v)}/s`)
          .join(', ')} (load ${format(os.loadavg())})`,
      );
    }
  }
  return figures;
}

function format(load: readonly number[]): string {
  return load.map((l) => l.toFixed(2)).join(' ');
}
