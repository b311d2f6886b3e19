/**
 * The deploy files cannot run here (no Docker engine), so this checks what can be checked:
 * docker-compose.yml parses, its broker has the settings the Kafka tests run against
 * (test/broker/broker.mjs) and advertises the listener runlog is pointed at.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
// @ts-expect-error: plain ESM JavaScript without type declarations
import { serverProperties } from '../broker/broker.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

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
});
