#!/usr/bin/env node
// Runs every test file (`*.test.ts` under test/) with `node --import tsx --test`.
// Node 20's --test takes file paths, not globs, so this builds the list.
// Kafka tests (`*.kafka.test.ts`) need a broker: with KAFKA_BROKERS unset, the broker in
// test/broker/ is fetched and started for the run and stopped after it.
// Files run CONCURRENCY at a time (RUNLOG_TEST_CONCURRENCY, default: the cores, at least 2).
// node's own default is one less than the cores: one at a time on a 2-core machine, where most
// of a file's time is spent waiting (on the broker, child processes, fsync) rather than computing.
// After the spec output, test/file-times.mjs lists the slowest files (RUNLOG_TEST_TIMES).
import { availableParallelism } from 'node:os';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const only = process.argv.slice(2);

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'broker' || name === 'node_modules' ? [] : findTests(path);
    return name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

function run(command, args, env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function withBroker(needsKafka, body) {
  if (!needsKafka || process.env.KAFKA_BROKERS) return body({});
  const { startBroker } = await import('./broker/broker.mjs');
  const broker = await startBroker();
  try {
    return await body({ KAFKA_BROKERS: broker.brokers });
  } finally {
    await broker.stop();
  }
}

const CONCURRENCY = Number(process.env.RUNLOG_TEST_CONCURRENCY ?? Math.max(2, availableParallelism()));
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1)
  throw new Error(`RUNLOG_TEST_CONCURRENCY must be a whole number from 1, got ${CONCURRENCY}`);

const files = findTests(join(root, 'test'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
const needsKafka = files.some((f) => f.endsWith('.kafka.test.ts'));
const code = await withBroker(needsKafka, (env) =>
  run(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      `--test-concurrency=${CONCURRENCY}`,
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      `--test-reporter=${join(root, 'test', 'file-times.mjs')}`,
      '--test-reporter-destination=stdout',
      ...files,
    ],
    env,
  ),
);
process.exit(code);
