#!/usr/bin/env node
// A real, single-node Apache Kafka 3.9.1 broker (KRaft: broker + controller in one JVM) for
// runlog's Kafka tests. The jars come from Maven Central (pom.xml next to this file) into lib/
// on first use; every start gets a fresh data directory under run/, so no state leaks between
// runs. A broker that cannot start throws with the tail of its log: never a silent skip.
//
//   const { startBroker } = await import('./broker/broker.mjs');
//   const broker = await startBroker();   // broker.brokers === '127.0.0.1:9092'
//   await broker.stop();
//
// CLI for manual use: `node test/broker/broker.mjs start|stop` (start leaves the broker
// running in the background; stop stops every broker started from this checkout).
// Ports: 9092 (+9093 for the controller), or RUNLOG_BROKER_PORT (0: any free ports). Each run
// records itself in run/<run>/broker.json, so a second concurrent test run from the same
// checkout takes free ports instead of colliding, and a leftover broker fails clearly.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';

const here = fileURLToPath(new URL('.', import.meta.url));
const libDir = join(here, 'lib');
const runRoot = join(here, 'run');
const RECORD = 'broker.json';
const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 20_000;

/** Fetches the broker's jars from Maven Central unless lib/ already has them. */
export function ensureJars() {
  if (existsSync(join(libDir, 'kafka_2.13-3.9.1.jar'))) return;
  console.error('[broker] fetching Apache Kafka 3.9.1 jars from Maven Central into test/broker/lib ...');
  const args = [
    '-B',
    '-q',
    '-f',
    join(here, 'pom.xml'),
    'dependency:copy-dependencies',
    '-DincludeScope=runtime',
    `-DoutputDirectory=${libDir}`,
  ];
  const result = spawnSync('mvn', args, { stdio: 'inherit' });
  if (result.error) throw new Error(`[broker] cannot run mvn (is Maven installed?): ${result.error.message}`);
  if (result.status !== 0) throw new Error(`[broker] mvn dependency:copy-dependencies failed (exit ${result.status})`);
}

/** The broker's server.properties; docker-compose.yml mirrors its settings (test/deploy/compose.test.ts checks). */
export function serverProperties({ port, controllerPort, dataDir }) {
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@${HOST}:${controllerPort}`,
    `listeners=PLAINTEXT://${HOST}:${port},CONTROLLER://${HOST}:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://${HOST}:${port}`,
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${dataDir}`,
    'num.partitions=1',
    'default.replication.factor=1',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=4',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=4',
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=false',
    'delete.topic.enable=true',
    // Compaction is part of what the tests exercise: let the cleaner run soon and often.
    'log.cleaner.enable=true',
    'log.cleaner.backoff.ms=500',
    'log.cleaner.threads=1',
    'log.cleaner.dedupe.buffer.size=33554432',
    '',
  ].join('\n');
}

function log4jProperties(logFile) {
  return [
    'log4j.rootLogger=INFO, file',
    'log4j.appender.file=org.apache.log4j.FileAppender',
    `log4j.appender.file.File=${logFile}`,
    'log4j.appender.file.layout=org.apache.log4j.PatternLayout',
    'log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n',
    'log4j.logger.kafka.request.logger=WARN',
    'log4j.logger.org.apache.kafka.clients=WARN',
    'log4j.logger.state.change.logger=WARN',
    '',
  ].join('\n');
}

/** True if something accepts TCP connections on host:port. */
function canConnect(port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Brokers started from this checkout: { runName, pid, ownerPid, detached, port } of each run dir. */
function records() {
  if (!existsSync(runRoot)) return [];
  return readdirSync(runRoot).flatMap((runName) => {
    try {
      return [{ runName, ...JSON.parse(readFileSync(join(runRoot, runName, RECORD), 'utf8')) }];
    } catch {
      return [{ runName, pid: -1 }];
    }
  });
}

/** Removes the run directories of brokers no longer running (logs of live ones stay). */
function cleanOldRuns() {
  for (const record of records()) {
    if (!isAlive(record.pid)) rmSync(join(runRoot, record.runName), { recursive: true, force: true });
  }
}

function isAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Two free TCP ports on 127.0.0.1 (for a second test run beside one holding 9092). */
async function freePorts() {
  const one = () =>
    new Promise((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, HOST, () => {
        const { port } = server.address();
        server.close(() => resolve(port));
      });
    });
  return [await one(), await one()];
}

/**
 * The ports to use. A busy port is an error, clearly explained, unless it is held by the
 * broker of another test run from this checkout that is still going (its owner process is
 * alive): then two free ports are taken instead, so concurrent runs do not collide.
 */
async function choosePorts(port, controllerPort) {
  const busy = [];
  for (const p of [port, controllerPort]) if (await canConnect(p)) busy.push(p);
  if (busy.length === 0) return [port, controllerPort];
  const live = records().filter((r) => isAlive(r.pid) && (r.port === port || r.controllerPort === controllerPort));
  const leftover = live.find((r) => r.detached || !isAlive(r.ownerPid));
  if (leftover) {
    throw new Error(
      `[broker] ${HOST}:${busy.join(', ')} is held by a broker test/broker started earlier (pid ${leftover.pid}, ` +
        `${leftover.detached ? 'started with `broker.mjs start`' : 'its test run is gone'}): stop it with \`node test/broker/broker.mjs stop\`, ` +
        `or use it: KAFKA_BROKERS=${HOST}:${leftover.port} npm test`,
    );
  }
  if (live.length > 0) {
    const ports = await freePorts();
    console.error(
      `[broker] ${HOST}:${port} is in use by another test run's broker (pid ${live[0].pid}); using ports ${ports.join(' and ')}`,
    );
    return ports;
  }
  throw new Error(
    `[broker] ${HOST}:${busy.join(', ')} is already in use by a process test/broker did not start. ` +
      'Stop it, point the tests at a running broker with KAFKA_BROKERS=host:port, or set RUNLOG_BROKER_PORT=0 for free ports.',
  );
}

function logTail(logFiles, lines = 60) {
  return logFiles
    .filter((f) => existsSync(f))
    .map((f) => `--- ${f} (last ${lines} lines) ---\n${readFileSync(f, 'utf8').split('\n').slice(-lines).join('\n')}`)
    .join('\n');
}

/**
 * A Kafka cluster id: 16 random bytes, base64url without padding. One starting with '-'
 * would be read by StorageTool as an option (Kafka's own Uuid.randomUuid skips those too).
 */
function newClusterId() {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function formatStorage(propsFile, outFile) {
  const clusterId = newClusterId();
  const result = spawnSync(
    'java',
    ['-cp', join(libDir, '*'), 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', propsFile, '--ignore-formatted'],
    { encoding: 'utf8' },
  );
  writeFileSync(outFile, `${result.stdout ?? ''}${result.stderr ?? ''}`);
  if (result.error) throw new Error(`[broker] cannot run java (is a JDK 17+ installed?): ${result.error.message}`);
  if (result.status !== 0) throw new Error(`[broker] StorageTool format failed (exit ${result.status}):\n${logTail([outFile])}`);
}

/** Waits until the broker accepts connections and answers a metadata request. */
async function waitUntilReady(child, port, logFiles) {
  const deadline = Date.now() + START_TIMEOUT_MS;
  const kafka = new kafkajs.Kafka({
    clientId: 'runlog-broker-probe',
    brokers: [`${HOST}:${port}`],
    logLevel: kafkajs.logLevel.NOTHING,
    connectionTimeout: 1000,
    retry: { retries: 0 },
  });
  let lastError = 'no TCP connection yet';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `[broker] the broker exited (code ${child.exitCode}, signal ${child.signalCode}) before it was ready\n${logTail(logFiles)}`,
      );
    }
    if (await canConnect(port)) {
      const admin = kafka.admin();
      try {
        await admin.connect();
        const cluster = await admin.describeCluster();
        if (cluster.brokers.length > 0 && cluster.controller !== null) return;
        lastError = 'metadata names no broker or controller yet';
      } catch (error) {
        lastError = String(error?.message ?? error);
      } finally {
        await admin.disconnect().catch(() => {});
      }
    }
    await sleep(250);
  }
  throw new Error(`[broker] not ready after ${START_TIMEOUT_MS} ms (last: ${lastError})\n${logTail(logFiles)}`);
}

/**
 * Starts a fresh broker. Options: port (9092), controllerPort (9093), detached (false: the
 * broker dies with this process; true: it outlives it, for the CLI).
 * Resolves { brokers: '127.0.0.1:<port>', pid, runDir, stop(), kill(), restart() }:
 * kill() SIGKILLs the broker and keeps its data; restart() starts it again on the same data
 * and ports (a crash and recovery, for fault tests).
 */
export async function startBroker({ port = defaultPort(), controllerPort = port === 0 ? 0 : port + 1, detached = false } = {}) {
  [port, controllerPort] = port === 0 ? await freePorts() : await choosePorts(port, controllerPort);
  ensureJars();
  cleanOldRuns();
  const runName = `${Date.now()}-${process.pid}`;
  const runDir = join(runRoot, runName);
  mkdirSync(join(runDir, 'data'), { recursive: true });
  // Recorded at once (with our pid until the broker's exists) so no concurrent run cleans it up.
  const record = (pid) =>
    writeFileSync(join(runDir, RECORD), JSON.stringify({ pid, ownerPid: process.pid, detached, port, controllerPort }));
  record(process.pid);
  const files = {
    props: join(runDir, 'server.properties'),
    log4j: join(runDir, 'log4j.properties'),
    serverLog: join(runDir, 'server.log'),
    stdoutLog: join(runDir, 'stdout.log'),
  };
  writeFileSync(files.props, serverProperties({ port, controllerPort, dataDir: join(runDir, 'data') }));
  writeFileSync(files.log4j, log4jProperties(files.serverLog));
  const started = Date.now();
  formatStorage(files.props, join(runDir, 'format.log'));
  let child = await launch(files, port, detached, record);
  const startMs = Date.now() - started;
  let stopped = false;
  return {
    brokers: `${HOST}:${port}`,
    get pid() {
      return child.pid;
    },
    runDir,
    startMs,
    async stop() {
      if (stopped) return;
      stopped = true;
      child.forget();
      await stopProcess(child.pid);
      rmSync(runDir, { recursive: true, force: true });
    },
    async kill() {
      child.forget();
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      while (isAlive(child.pid)) await sleep(20);
    },
    async restart() {
      if (isAlive(child.pid)) throw new Error(`[broker] restart: pid ${child.pid} is still running; kill() it first`);
      child = await launch(files, port, detached, record);
    },
  };
}

/** Runs kafka.Kafka on the run's files and waits until it is ready. */
async function launch(files, port, detached, record) {
  const out = openSync(files.stdoutLog, 'a');
  const child = spawn(
    'java',
    [
      '-Xmx1g',
      '-Xms1g',
      '-XX:+UseG1GC',
      '-Djava.awt.headless=true',
      `-Dlog4j.configuration=file:${files.log4j}`,
      '-cp',
      join(libDir, '*'),
      'kafka.Kafka',
      files.props,
    ],
    { stdio: ['ignore', out, out], detached },
  );
  closeSync(out);
  const killOnExit = () => child.kill('SIGKILL');
  if (!detached) process.once('exit', killOnExit);
  record(child.pid);
  try {
    await waitUntilReady(child, port, [files.serverLog, files.stdoutLog]);
  } catch (error) {
    await stopProcess(child.pid);
    throw error;
  }
  if (detached) child.unref();
  return { pid: child.pid, forget: () => process.removeListener('exit', killOnExit) };
}

/** SIGTERM (Kafka shuts down cleanly), then SIGKILL after STOP_TIMEOUT_MS. */
async function stopProcess(pid) {
  if (!isAlive(pid)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return;
    await sleep(100);
  }
  console.error(`[broker] pid ${pid} ignored SIGTERM for ${STOP_TIMEOUT_MS} ms; killing it`);
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Stops every broker test/broker started from this checkout that is still running. */
export async function stopRecordedBrokers() {
  const live = records().filter((r) => isAlive(r.pid));
  await Promise.all(live.map((r) => stopProcess(r.pid)));
  cleanOldRuns();
  return live.map((r) => r.pid);
}

function defaultPort() {
  const fromEnv = process.env.RUNLOG_BROKER_PORT;
  return fromEnv === undefined || fromEnv === '' ? 9092 : Number(fromEnv);
}

async function cli(command) {
  if (command === 'start') {
    const broker = await startBroker({ detached: true });
    console.log(`broker ready on ${broker.brokers} (pid ${broker.pid}, ${broker.startMs} ms, logs in ${broker.runDir})`);
    console.log(`use it: KAFKA_BROKERS=${broker.brokers} npm test`);
  } else if (command === 'stop') {
    const stopped = await stopRecordedBrokers();
    console.log(stopped.length > 0 ? `stopped broker pid ${stopped.join(', ')}` : 'no broker of test/broker is running');
  } else {
    console.error('usage: node test/broker/broker.mjs start|stop');
    process.exitCode = 2;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  cli(process.argv[2]).then(
    () => process.exit(),
    (error) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
