/**
 * The configuration of `runlog serve` (src/server/config.ts): a table of bad values from
 * each source (flag, environment variable, config file key), each refused with
 * InvalidArgument naming the source and the value; then the defaults, the precedence
 * flags > environment > config file > defaults, paths relative to the config file, the
 * log (file or Kafka), durations, tokens and TLS from each source.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { RunlogError } from '../../src/errors.ts';
import { loadServeConfig, SERVE_ENV_VARS, SERVE_FLAGS, type ServeConfig } from '../../src/server/config.ts';
import { scratchDir } from '../support/cleanup.ts';
import { selfSigned } from './self-signed.ts';

type Vars = Record<string, string>;
const TOKENS = [{ name: 'web', token: 'web-token-0123456789', tenants: ['acme'], roles: ['producer'] }];

/** A scratch directory with config files, a tokens file and TLS files for the rows below. */
async function fixtures(t: Parameters<typeof scratchDir>[0]) {
  const dir = await scratchDir(t, 'runlog-config-');
  const files: Record<string, string> = {
    'tokens.json': JSON.stringify(TOKENS),
    'empty-tokens.json': '[]',
    'bad.json': '{\n  "port": 7070,\n  "host": [1,]\n}',
    'array.json': '[]',
    'unknown.json': JSON.stringify({ prot: 1 }),
    'port-text.json': JSON.stringify({ port: 'x' }),
    'port-fraction.json': JSON.stringify({ port: 1.5 }),
    'brokers-empty.json': JSON.stringify({ brokers: [] }),
    'brokers-number.json': JSON.stringify({ brokers: [9092] }),
    'both-tokens.json': JSON.stringify({ tokensFile: 'tokens.json', tokens: TOKENS }),
    'inline-empty.json': JSON.stringify({ tokens: [] }),
    'dir.json': JSON.stringify({ dir: 'log-here' }),
    'lifetime.json': JSON.stringify({ ticketLifetime: -1 }),
    'all.json': JSON.stringify({ port: 1, host: '10.0.0.1', dir: 'rel', tokensFile: 'tokens.json', ticketLifetime: 250, logLevel: 'warn' }),
    'inline.json': JSON.stringify({ tokens: TOKENS, partitions: 4, maxInputBytes: '4096' }),
    'kafka.json': JSON.stringify({ brokers: ['a:9092', 'b:9093'], topic: 'jobs', clientId: 'svc' }),
    'not-pem.pem': 'not a certificate',
    'cluster.json': JSON.stringify({
      brokers: 'k:9092',
      group: 'nodes',
      advertiseUrl: 'https://node-1.example:7443/',
      sessionTimeout: 8000,
    }),
    'group-number.json': JSON.stringify({ brokers: 'k:9092', group: 7 }),
    'group-file-log.json': JSON.stringify({ group: 'nodes' }),
  };
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return { dir, tls: selfSigned(dir), other: selfSigned(dir, 'other') };
}

async function refusal(flags: Vars, env: Vars): Promise<RunlogError> {
  try {
    await loadServeConfig(flags, env);
  } catch (error) {
    if (error instanceof RunlogError) return error;
    throw error;
  }
  assert.fail('expected a refusal');
}

describe('serve configuration', () => {
  it('refuses every bad value naming its source and the value', async (t) => {
    const { dir, tls, other } = await fixtures(t);
    const at = (name: string) => join(dir, name);
    const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    // [what, flags, environment, the message]
    const rows: [string, Vars, Vars, RegExp][] = [
      ['port not a number', { port: 'abc' }, {}, /^--port must be an integer from 0 to 65535, got "abc"$/],
      ['port too large', { port: '70000' }, {}, /^--port must be an integer from 0 to 65535, got "70000"$/],
      ['port negative', { port: '-1' }, {}, /^--port must be an integer from 0 to 65535, got "-1"$/],
      ['port empty', { port: '' }, {}, /^--port must be an integer from 0 to 65535, got ""$/],
      ['port in the environment', {}, { RUNLOG_PORT: '80x' }, /^RUNLOG_PORT must be an integer from 0 to 65535, got "80x"$/],
      ['host empty', { host: '' }, {}, /^--host must be a non-empty string, got ""$/],
      ['partitions 0', {}, { RUNLOG_PARTITIONS: '0' }, /^RUNLOG_PARTITIONS must be an integer from 1 to 1024, got "0"$/],
      ['max input bytes', { 'max-input-bytes': '1e6' }, {}, /^--max-input-bytes must be an integer from 1 to 67108864, got "1e6"$/],
      ['lifetime unit', { 'ticket-lifetime': '7w' }, {}, /^--ticket-lifetime must be a duration \(milliseconds, .*\), got "7w"$/],
      ['lifetime negative', {}, { RUNLOG_TICKET_LIFETIME: '-5s' }, /^RUNLOG_TICKET_LIFETIME must be a duration .* got "-5s"$/],
      ['log level', { 'log-level': 'verbose' }, {}, /^--log-level must be one of debug, info, warn, error, got "verbose"$/],
      ['log level env', {}, { RUNLOG_LOG_LEVEL: 'INFO' }, /^RUNLOG_LOG_LEVEL must be one of debug, info, warn, error, got "INFO"$/],
      ['a broker without port', { brokers: 'localhost' }, {}, /^--brokers must be a comma-separated list of host:port, got "localhost"/],
      ['an empty broker', {}, { RUNLOG_KAFKA_BROKERS: 'a:1,,b:2' }, /^RUNLOG_KAFKA_BROKERS must be .* \("" is not host:port\)$/],
      ['a topic without brokers', {}, { RUNLOG_TOPIC: 'jobs' }, /^RUNLOG_TOPIC names a Kafka setting, but no brokers are given/],
      ['a dir and brokers', { dir: 'x' }, { RUNLOG_KAFKA_BROKERS: 'a:1' }, /^--dir and RUNLOG_KAFKA_BROKERS name two logs/],
      [
        'no tokens file',
        { tokens: at('missing.json') },
        {},
        new RegExp(`^tokens file ${esc(at('missing.json'))} \\(--tokens\\) cannot be read: .*ENOENT`),
      ],
      ['an empty tokens file', {}, { RUNLOG_TOKENS_FILE: at('empty-tokens.json') }, /\(RUNLOG_TOKENS_FILE\) holds no tokens/],
      ['inline tokens not JSON', {}, { RUNLOG_TOKENS: 'web-token-0123456789' }, /^RUNLOG_TOKENS is not valid JSON/],
      [
        'inline tokens bad',
        {},
        { RUNLOG_TOKENS: '[{"name":"x"}]' },
        /^RUNLOG_TOKENS\[0\] \(name "x"\) must have exactly one of token and sha256$/,
      ],
      [
        'both token variables',
        {},
        { RUNLOG_TOKENS_FILE: at('tokens.json'), RUNLOG_TOKENS: JSON.stringify(TOKENS) },
        /^RUNLOG_TOKENS_FILE and RUNLOG_TOKENS are both set; give one$/,
      ],
      ['a certificate without key', { 'tls-cert': tls.certFile }, {}, /^--tls-cert is given without a key \(--tls-key\); TLS needs both$/],
      ['a key without certificate', {}, { RUNLOG_TLS_KEY: tls.keyFile }, /^RUNLOG_TLS_KEY is given without a certificate/],
      [
        'an unreadable certificate',
        { 'tls-cert': at('none.pem'), 'tls-key': tls.keyFile },
        {},
        /^--tls-cert ".*none\.pem" cannot be read: .*ENOENT/,
      ],
      [
        'not PEM',
        { 'tls-cert': at('not-pem.pem'), 'tls-key': tls.keyFile },
        {},
        /^--tls-cert ".*not-pem\.pem" and --tls-key ".*tls-key\.pem" are not a PEM/,
      ],
      [
        'a key of another certificate',
        { 'tls-cert': tls.certFile, 'tls-key': other.keyFile },
        {},
        /are not a PEM certificate and its key: .*mismatch/i,
      ],
      ['no config file', { config: at('none.json') }, {}, /^config file .*none\.json \(--config\) cannot be read: .*ENOENT/],
      ['a config file not JSON', {}, { RUNLOG_CONFIG: at('bad.json') }, /^config file .*bad\.json \(RUNLOG_CONFIG\) is not valid JSON/],
      [
        'a config file of an array',
        { config: at('array.json') },
        {},
        /^config file .*array\.json \(--config\) must hold a JSON object, got \[\]$/,
      ],
      [
        'an unknown key',
        { config: at('unknown.json') },
        {},
        /^config file .*unknown\.json \(--config\) has an unknown key "prot"; allowed: port, host/,
      ],
      [
        'a config port as text',
        { config: at('port-text.json') },
        {},
        /^config file .*port-text\.json: port must be an integer from 0 to 65535, got "x"$/,
      ],
      ['a config port fraction', { config: at('port-fraction.json') }, {}, /^config file .*port-fraction\.json: port must be .* got 1\.5$/],
      [
        'config brokers empty',
        { config: at('brokers-empty.json') },
        {},
        /brokers-empty\.json: brokers must be a comma-separated list of host:port, got \[\]$/,
      ],
      [
        'config brokers numbers',
        { config: at('brokers-number.json') },
        {},
        /brokers-number\.json: brokers must be .* \(9092 is not host:port\)$/,
      ],
      [
        'config tokens twice',
        { config: at('both-tokens.json') },
        {},
        /^config file .*both-tokens\.json has both tokensFile and tokens; give one$/,
      ],
      ['config tokens empty', { config: at('inline-empty.json') }, {}, /^config file .*inline-empty\.json: tokens holds no tokens/],
      ['config lifetime', { config: at('lifetime.json') }, {}, /lifetime\.json: ticketLifetime must be a duration .* got -1$/],
      [
        'a file dir and env brokers',
        { config: at('dir.json') },
        { RUNLOG_KAFKA_BROKERS: 'a:1' },
        /^config file .*dir\.json: dir and RUNLOG_KAFKA_BROKERS name two logs/,
      ],
      // A cluster node: a group on Kafka; its other settings only with a group.
      [
        'a group without Kafka',
        { group: 'nodes' },
        {},
        /^--group "nodes" makes this serve a cluster node, and a cluster shares a Kafka topic: give brokers/,
      ],
      [
        'a group with a dir',
        { dir: 'x' },
        { RUNLOG_GROUP: 'nodes' },
        /^RUNLOG_GROUP "nodes" makes this serve a cluster node, .* give brokers/,
      ],
      [
        'a file group on the file log',
        { config: at('group-file-log.json') },
        {},
        /group-file-log\.json: group "nodes" makes this serve a cluster node/,
      ],
      ['a group empty', { group: '', brokers: 'k:1' }, {}, /^--group must be a non-empty string, got ""$/],
      ['a group too long', { group: 'g'.repeat(256), brokers: 'k:1' }, {}, /^--group must be at most 255 characters/],
      ['a group number', { config: at('group-number.json') }, {}, /group-number\.json: group must be a non-empty string, got 7$/],
      [
        'an advertise URL without group',
        { 'advertise-url': 'http://a:1', brokers: 'k:1' },
        {},
        /^--advertise-url is a cluster node's setting, but no group is given/,
      ],
      [
        'a session timeout without group',
        {},
        { RUNLOG_SESSION_TIMEOUT: '6s' },
        /^RUNLOG_SESSION_TIMEOUT is a cluster node's setting, but no group/,
      ],
      ...(
        [
          ['not a URL', 'node-1:7070'],
          ['ftp', 'ftp://node-1:21'],
          ['with a path', 'http://node-1:7070/runlog'],
          ['with a query', 'http://node-1:7070/?a=1'],
          ['with a fragment', 'http://node-1:7070/#x'],
          ['with credentials', 'http://u:p@node-1:7070'],
          ['empty', ''],
        ] as const
      ).map(([what, url]): [string, Vars, Vars, RegExp] => [
        `an advertise URL ${what}`,
        { group: 'g', brokers: 'k:1', 'advertise-url': url },
        {},
        new RegExp(
          `^--advertise-url must be an http or https URL of scheme, host and port only \\(http://10\\.0\\.0\\.5:7070\\), got ${esc(JSON.stringify(url))}$`,
        ),
      ]),
      [
        'a session timeout too short',
        { group: 'g', brokers: 'k:1', 'session-timeout': '999' },
        {},
        /^--session-timeout must be from 1000 ms to 3600000 ms, got "999"$/,
      ],
      [
        'a session timeout too long',
        { group: 'g', brokers: 'k:1', 'session-timeout': '2h' },
        {},
        /^--session-timeout must be from 1000 ms to 3600000 ms, got "2h"$/,
      ],
      [
        'a session timeout unit',
        { group: 'g', brokers: 'k:1' },
        { RUNLOG_SESSION_TIMEOUT: '10 s' },
        /^RUNLOG_SESSION_TIMEOUT must be a duration/,
      ],
    ];
    for (const [what, flags, env, message] of rows) {
      await t.test(what, async () => {
        const error = await refusal(flags, env);
        assert.equal(error.code, 'InvalidArgument');
        assert.match(error.message, message);
        assert.ok(!error.message.includes('web-token-0123456789'), 'a token shown');
      });
    }
  });

  it('reads flags over the environment over the config file over the defaults', async (t) => {
    const { dir } = await fixtures(t);
    const at = (name: string) => join(dir, name);
    const defaults: ServeConfig = { host: '0.0.0.0', port: 7070, log: { kind: 'file', dir: './data' }, logLevel: 'info' };
    assert.deepEqual(await loadServeConfig({}, {}), defaults);
    assert.deepEqual(
      await loadServeConfig({}, { RUNLOG_PORT: '', RUNLOG_HOST: '', RUNLOG_TOKENS: '' }),
      defaults,
      'empty variables are unset',
    );

    const fromFile = await loadServeConfig({ config: at('all.json') }, {});
    assert.deepEqual(
      { ...fromFile, tokens: fromFile.tokens?.records.map((r) => r.name) },
      { host: '10.0.0.1', port: 1, log: { kind: 'file', dir: join(dir, 'rel') }, logLevel: 'warn', ticketLifetimeMs: 250, tokens: ['web'] },
    );
    const fromEnv = await loadServeConfig(
      {},
      { RUNLOG_CONFIG: at('all.json'), RUNLOG_PORT: '2', RUNLOG_DIR: 'env-dir', RUNLOG_TICKET_LIFETIME: '7d' },
    );
    assert.deepEqual(
      [fromEnv.port, fromEnv.log, fromEnv.host, fromEnv.ticketLifetimeMs],
      [2, { kind: 'file', dir: 'env-dir' }, '10.0.0.1', 604_800_000],
    );
    const fromFlags = await loadServeConfig(
      { config: at('all.json'), port: '3', host: '127.0.0.1', 'ticket-lifetime': '1500', 'log-level': 'debug' },
      { RUNLOG_PORT: '2', RUNLOG_LOG_LEVEL: 'error' },
    );
    assert.deepEqual([fromFlags.port, fromFlags.host, fromFlags.ticketLifetimeMs, fromFlags.logLevel], [3, '127.0.0.1', 1500, 'debug']);

    const durations: [string, number][] = [
      ['0', 0],
      ['500ms', 500],
      ['30s', 30_000],
      ['15m', 900_000],
      ['12h', 43_200_000],
    ];
    for (const [text, ms] of durations) assert.equal((await loadServeConfig({ 'ticket-lifetime': text }, {})).ticketLifetimeMs, ms, text);

    const inline = await loadServeConfig({ config: at('inline.json') }, {});
    assert.deepEqual([inline.tokens?.records.map((r) => r.name), inline.partitions, inline.maxInputBytes], [['web'], 4, 4096]);
    const envTokens = await loadServeConfig(
      { config: at('both-tokens.json') },
      { RUNLOG_TOKENS: JSON.stringify([{ ...TOKENS[0], name: 'env' }]) },
    );
    assert.deepEqual(
      envTokens.tokens?.records.map((r) => r.name),
      ['env'],
      'RUNLOG_TOKENS over the config file',
    );
    const flagTokens = await loadServeConfig({ tokens: at('tokens.json') }, { RUNLOG_TOKENS: 'not even JSON' });
    assert.deepEqual(
      flagTokens.tokens?.records.map((r) => r.name),
      ['web'],
      '--tokens over RUNLOG_TOKENS',
    );
  });

  it('reads the Kafka log and TLS from any source', async (t) => {
    const { dir, tls } = await fixtures(t);
    assert.deepEqual((await loadServeConfig({}, { RUNLOG_KAFKA_BROKERS: 'k1:9092, k2:9092' })).log, {
      kind: 'kafka',
      brokers: ['k1:9092', 'k2:9092'],
      topic: 'runlog',
    });
    assert.deepEqual((await loadServeConfig({ config: join(dir, 'kafka.json') }, { RUNLOG_TOPIC: 'other' })).log, {
      kind: 'kafka',
      brokers: ['a:9092', 'b:9093'],
      topic: 'other',
      clientId: 'svc',
    });
    const secure = await loadServeConfig({ 'tls-cert': tls.certFile }, { RUNLOG_TLS_KEY: tls.keyFile });
    assert.deepEqual(secure.tls, { cert: tls.cert, key: tls.key });
  });

  it("reads a cluster node's settings from any source", async (t) => {
    const { dir } = await fixtures(t);
    assert.equal((await loadServeConfig({ brokers: 'k:1' }, {})).cluster, undefined, 'no group: no cluster');
    assert.deepEqual((await loadServeConfig({ brokers: 'k:1', group: 'nodes' }, {})).cluster, { group: 'nodes', sessionTimeoutMs: 10_000 });
    assert.deepEqual(
      (
        await loadServeConfig(
          {},
          { RUNLOG_KAFKA_BROKERS: 'k:1', RUNLOG_GROUP: 'g', RUNLOG_ADVERTISE_URL: 'http://10.0.0.5:7070', RUNLOG_SESSION_TIMEOUT: '6s' },
        )
      ).cluster,
      { group: 'g', advertiseUrl: 'http://10.0.0.5:7070', sessionTimeoutMs: 6_000 },
    );
    const fromFile = await loadServeConfig({ config: join(dir, 'cluster.json') }, {});
    assert.deepEqual(fromFile.cluster, { group: 'nodes', advertiseUrl: 'https://node-1.example:7443', sessionTimeoutMs: 8_000 });
    const flagsFirst = await loadServeConfig(
      { config: join(dir, 'cluster.json'), group: 'flag', 'session-timeout': '7000' },
      { RUNLOG_GROUP: 'env' },
    );
    assert.deepEqual([flagsFirst.cluster?.group, flagsFirst.cluster?.sessionTimeoutMs], ['flag', 7_000]);
  });

  it('names every flag and environment variable it reads', () => {
    assert.deepEqual(SERVE_ENV_VARS, [
      'RUNLOG_CONFIG',
      'RUNLOG_PORT',
      'RUNLOG_HOST',
      'RUNLOG_DIR',
      'RUNLOG_KAFKA_BROKERS',
      'RUNLOG_TOPIC',
      'RUNLOG_KAFKA_CLIENT_ID',
      'RUNLOG_PARTITIONS',
      'RUNLOG_MAX_INPUT_BYTES',
      'RUNLOG_TICKET_LIFETIME',
      'RUNLOG_TOKENS_FILE',
      'RUNLOG_TLS_CERT',
      'RUNLOG_TLS_KEY',
      'RUNLOG_LOG_LEVEL',
      'RUNLOG_GROUP',
      'RUNLOG_ADVERTISE_URL',
      'RUNLOG_SESSION_TIMEOUT',
      'RUNLOG_TOKENS',
    ]);
    assert.deepEqual(SERVE_FLAGS, [
      'config',
      'port',
      'host',
      'dir',
      'brokers',
      'topic',
      'client-id',
      'partitions',
      'max-input-bytes',
      'ticket-lifetime',
      'tokens',
      'tls-cert',
      'tls-key',
      'log-level',
      'group',
      'advertise-url',
      'session-timeout',
    ]);
  });
});
