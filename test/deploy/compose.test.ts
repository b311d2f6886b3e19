/**
 * The deploy files cannot run here (no Docker engine), so this checks what can be checked:
 * docker-compose.yml parses, its broker has the settings the Kafka tests run against
 * (test/broker/broker.mjs) and advertises the listener runlog is pointed at; runlog's service
 * sets only variables `runlog serve` reads, to values it accepts; the Dockerfile's image is
 * what the README says (non-root, the data directory a volume, the server's port, `runlog
 * serve`); and both health checks, run as the container would run them, pass against a real
 * server and fail once it is gone.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
// @ts-expect-error: plain ESM JavaScript without type declarations
import { serverProperties } from '../broker/broker.mjs';
import { DEFAULT_DIR, DEFAULT_PORT, SERVE_ENV_VARS, loadServeConfig } from '../../src/server/config.ts';
import { serverOn } from '../server/fixtures.ts';
import { dockerStages, root, single } from './dockerfile.ts';

interface Service {
  image?: string;
  environment: Record<string, string | number>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] };
}

async function composeServices(): Promise<Record<string, Service>> {
  const compose = parse(await readFile(join(root, 'docker-compose.yml'), 'utf8')) as { services: Record<string, Service> };
  assert.deepEqual(Object.keys(compose.services).sort(), ['kafka', 'runlog']);
  return compose.services;
}

/** A value as the container gets it: compose's `$$` is a `$`, `${NAME:-default}` the default (NAME unset here). */
function interpolated(value: string | number): string {
  return String(value).replace(/\$\$|\$\{[A-Z_]+:-([^}]*)\}/g, (match, fallback: string | undefined) => (match === '$$' ? '$' : fallback!));
}

/** Broker settings that name this machine's hosts and ports: compose has its own (two listeners). */
const NETWORK = ['listeners', 'advertised.listeners', 'controller.quorum.voters', 'listener.security.protocol.map'];

/** The apache/kafka image reads `KAFKA_LOG_CLEANER_ENABLE` as `log.cleaner.enable`. */
function kafkaSettings(environment: Service['environment']): Map<string, string> {
  const settings = Object.entries(environment).filter(([name]) => name.startsWith('KAFKA_'));
  return new Map(settings.map(([name, value]) => [name.slice('KAFKA_'.length).toLowerCase().replaceAll('_', '.'), interpolated(value)]));
}

function testBrokerSettings(): Map<string, string> {
  const text: string = serverProperties({ port: 9092, controllerPort: 9093, dataDir: '/data' });
  const lines = text.split('\n').filter((line) => line !== '');
  return new Map(lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

/** name -> `host:port` of each advertised listener. */
function advertised(settings: Map<string, string>): Map<string, string> {
  const listeners = settings.get('advertised.listeners')!.split(',');
  return new Map(listeners.map((listener) => listener.split('://') as [string, string]));
}

/** Runs a health check's command (exec form) as Docker would in the container, with `RUNLOG_PORT`: its exit code. */
async function healthCheck(command: string[], port: number): Promise<number | null> {
  const child = spawn(command[0]!, command.slice(1), { env: { ...process.env, RUNLOG_PORT: String(port) }, stdio: 'ignore' });
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

describe('deploy files', () => {
  it('the compose broker has the Kafka tests’ settings, their Kafka version, a volume, a health check, and the listener runlog uses', async () => {
    const { kafka, runlog } = await composeServices();
    const pom = await readFile(join(root, 'test/broker/pom.xml'), 'utf8');
    const testVersion = /<artifactId>kafka_2\.13<\/artifactId>\s*<version>([^<]+)<\/version>/.exec(pom)?.[1];
    assert.equal(kafka!.image, `apache/kafka:${testVersion}`);

    const compose = kafkaSettings(kafka!.environment);
    const tests = testBrokerSettings();
    const notNetwork = (settings: Map<string, string>) =>
      [...settings].filter(([name]) => !NETWORK.includes(name) && name !== 'log.dirs' && name !== 'node.id').sort();
    assert.deepEqual(notNetwork(compose), notNetwork(tests), 'the same broker settings as test/broker/broker.mjs');
    assert.equal(compose.get('transaction.state.log.replication.factor'), '1', 'one broker: transactions need replication 1');
    assert.equal(compose.get('auto.create.topics.enable'), 'false', 'runlog creates its topic, compacted');
    assert.equal(compose.get('node.id'), compose.get('controller.quorum.voters')!.split('@')[0]);
    assert.ok(kafka!.volumes?.includes(`kafka-data:${compose.get('log.dirs')}`), 'the broker’s data is on a volume');

    const listeners = advertised(compose);
    assert.equal(listeners.get('PLAINTEXT'), '127.0.0.1:9092', 'the tests’ KAFKA_BROKERS=127.0.0.1:9092 reaches it');
    assert.ok(kafka!.ports?.includes('127.0.0.1:9092:9092'));
    const brokers = interpolated(runlog!.environment.RUNLOG_KAFKA_BROKERS!);
    const [name] = [...listeners].find(([, address]) => address === brokers) ?? [];
    assert.ok(
      name !== undefined && brokers.startsWith('kafka:'),
      `runlog's brokers ${brokers} are an advertised listener of the kafka service`,
    );
    assert.match(compose.get('listeners')!, new RegExp(`\\b${name}://:${brokers.split(':')[1]}\\b`));
    assert.match(compose.get('listener.security.protocol.map')!, new RegExp(`\\b${name}:PLAINTEXT\\b`));
    assert.ok(kafka!.healthcheck?.test.includes('127.0.0.1:9092'), 'the broker’s health check asks its own listener');
  });

  it('runlog’s service: variables runlog serve reads, the image’s port, user, volume and command, health checks that reach the server', async (t) => {
    const { runlog } = await composeServices();
    const environment = Object.fromEntries(Object.entries(runlog!.environment).map(([name, value]) => [name, interpolated(value)]));
    const unknown = Object.keys(environment).filter((name) => !SERVE_ENV_VARS.includes(name));
    assert.deepEqual(unknown, [], 'every variable compose sets is one runlog serve reads');
    const config = await loadServeConfig({}, environment);
    assert.deepEqual(config.log, { kind: 'kafka', brokers: ['kafka:19092'], topic: 'runlog' });
    assert.equal(config.tokens, undefined, 'RUNLOG_TOKENS unset: no tokens (loopback only)');
    assert.deepEqual(runlog!.ports, [`127.0.0.1:${config.port}:${config.port}`]);

    const image = (await dockerStages()).at(-1)!;
    assert.match(single(image, 'FROM'), /^node:20[-.]/, 'Node 20, as package.json engines says');
    assert.equal(Number(single(image, 'EXPOSE')), DEFAULT_PORT);
    assert.equal(config.port, DEFAULT_PORT);
    assert.doesNotMatch(single(image, 'USER'), /^(root|0)(:|$)/);
    assert.equal(single(image, 'VOLUME'), posix.join(single(image, 'WORKDIR'), DEFAULT_DIR), 'the default ./data is the volume');
    assert.deepEqual(JSON.parse(single(image, 'CMD')), ['runlog', 'serve']);

    const dockerCheck = single(image, 'HEALTHCHECK');
    assert.ok(dockerCheck.includes(`|| ${DEFAULT_PORT}`), 'the image’s check defaults to the server’s port');
    const checks = [
      JSON.parse(dockerCheck.slice(dockerCheck.indexOf('CMD [') + 'CMD '.length)) as string[],
      runlog!.healthcheck!.test.slice(1).map(interpolated),
    ];
    assert.equal(runlog!.healthcheck!.test[0], 'CMD');
    const { server } = await serverOn(t);
    for (const check of checks) {
      assert.ok(
        check.some((arg) => arg.includes('/healthz')),
        `${check.join(' ')} asks /healthz`,
      );
      assert.equal(await healthCheck(check, server.port), 0, `${check.join(' ')} passes while the server serves`);
    }
    await server.close();
    for (const check of checks) assert.notEqual(await healthCheck(check, server.port), 0, `${check.join(' ')} fails once it is gone`);
  });
});
