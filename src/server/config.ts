/**
 * The configuration of `runlog serve`, from command-line flags, environment variables and
 * an optional JSON config file (--config FILE or RUNLOG_CONFIG), in that precedence:
 * flags > environment > config file > defaults. Each setting is one row of SETTINGS: its
 * flag, its variable and its config file key (the setting's own name). An empty variable
 * counts as unset. Every bad value is InvalidArgument naming where it came from (`--port`,
 * `RUNLOG_PORT`, `config file /etc/runlog.json: port`) and the value; files named by the
 * configuration (the tokens file, the TLS certificate and key) are read here, so a serve
 * whose configuration loads has nothing left to refuse but the log and the port. Paths in
 * the config file are relative to the file's directory.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import { invalidArgument } from '../errors.ts';
import type { LogConfig } from '../log/event-log.ts';
import { describe, isPlainObject, requireName, requireOneOf, requirePath } from '../validation/index.ts';
import { checkTokens, parseTokens, type Tokens } from './auth.ts';
import { LOG_LEVELS } from './logger.ts';
import type { LogLevel } from './types.ts';

export interface ServeConfig {
  /** The host asked for (the server binds loopback instead when no tokens are configured). */
  host: string;
  port: number;
  log: LogConfig;
  /** Partitions of a log this serve creates; undefined: the log's default (an existing log keeps its count). */
  partitions?: number;
  maxInputBytes?: number;
  /** Closed entries are pruned this long after they closed; undefined: kept until pruned by hand. */
  ticketLifetimeMs?: number;
  /** Undefined: no tokens, so the server listens on loopback only. */
  tokens?: Tokens;
  tls?: { cert: Buffer; key: Buffer };
  logLevel: LogLevel;
  /** Set: this serve is a node of a cluster sharing a Kafka topic (src/cluster); its consumer group decides what it serves. */
  cluster?: ClusterConfig;
}

export interface ClusterConfig {
  /** The consumer group of the cluster's nodes. */
  group: string;
  /** The base URL other nodes and clients reach this node at; undefined: http(s)://<host>:<bound port>. */
  advertiseUrl?: string;
  /** How long the group waits for a silent node before giving its partitions to the others. */
  sessionTimeoutMs: number;
}

export const DEFAULT_PORT = 7070;
export const DEFAULT_HOST = '0.0.0.0';
export const DEFAULT_DIR = './data';
export const DEFAULT_TOPIC = 'runlog';
export const DEFAULT_SESSION_TIMEOUT_MS = 10_000;

type Parse = (value: unknown, where: string) => unknown;

interface Setting {
  flag: string;
  env: string;
  parse: Parse;
  /** A path: in the config file, relative to the file's directory. */
  path?: boolean;
}

const SETTINGS = {
  port: { flag: 'port', env: 'RUNLOG_PORT', parse: integer(0, 65_535) },
  host: { flag: 'host', env: 'RUNLOG_HOST', parse: (value, where) => requireName(where, value) },
  dir: { flag: 'dir', env: 'RUNLOG_DIR', parse: (value, where) => requirePath(where, value), path: true },
  brokers: { flag: 'brokers', env: 'RUNLOG_KAFKA_BROKERS', parse: brokerList },
  topic: { flag: 'topic', env: 'RUNLOG_TOPIC', parse: (value, where) => requireName(where, value) },
  clientId: { flag: 'client-id', env: 'RUNLOG_KAFKA_CLIENT_ID', parse: (value, where) => requireName(where, value) },
  partitions: { flag: 'partitions', env: 'RUNLOG_PARTITIONS', parse: integer(1, 1_024) },
  maxInputBytes: { flag: 'max-input-bytes', env: 'RUNLOG_MAX_INPUT_BYTES', parse: integer(1, 64 * 1024 * 1024) },
  ticketLifetime: { flag: 'ticket-lifetime', env: 'RUNLOG_TICKET_LIFETIME', parse: duration },
  tokensFile: { flag: 'tokens', env: 'RUNLOG_TOKENS_FILE', parse: (value, where) => requirePath(where, value), path: true },
  tlsCert: { flag: 'tls-cert', env: 'RUNLOG_TLS_CERT', parse: (value, where) => requirePath(where, value), path: true },
  tlsKey: { flag: 'tls-key', env: 'RUNLOG_TLS_KEY', parse: (value, where) => requirePath(where, value), path: true },
  logLevel: { flag: 'log-level', env: 'RUNLOG_LOG_LEVEL', parse: (value, where) => requireOneOf(where, value, LOG_LEVELS) },
  group: { flag: 'group', env: 'RUNLOG_GROUP', parse: groupId },
  advertiseUrl: { flag: 'advertise-url', env: 'RUNLOG_ADVERTISE_URL', parse: baseUrl },
  sessionTimeout: { flag: 'session-timeout', env: 'RUNLOG_SESSION_TIMEOUT', parse: bounded(duration, 1_000, 3_600_000) },
} satisfies Record<string, Setting>;

type Key = keyof typeof SETTINGS;
/** The config file's keys: every setting's own name, and `tokens` (the tokens inline, as in a tokens file). */
const FILE_KEYS: readonly string[] = [...Object.keys(SETTINGS), 'tokens'];

/** Every environment variable `runlog serve` reads. */
export const SERVE_ENV_VARS: readonly string[] = ['RUNLOG_CONFIG', ...Object.values(SETTINGS).map((s) => s.env), 'RUNLOG_TOKENS'];

/** Every flag of `runlog serve` that takes a value (without the leading --). */
export const SERVE_FLAGS: readonly string[] = ['config', ...Object.values(SETTINGS).map((s) => s.flag)];

type Env = Readonly<Record<string, string | undefined>>;
type Flags = Readonly<Record<string, string | undefined>>;

interface ConfigFile {
  path: string;
  body: Record<string, unknown>;
}

/** The checked configuration from parsed flags (name without -- -> value), the environment and the config file they name. */
export async function loadServeConfig(flags: Flags, env: Env): Promise<ServeConfig> {
  const file = await readConfigFile(flags, env);
  const found = <K extends Key>(key: K) => lookup(key, flags, env, file);
  const ticketLifetimeMs = found('ticketLifetime')?.value as number | undefined;
  const config: ServeConfig = {
    host: (found('host')?.value as string | undefined) ?? DEFAULT_HOST,
    port: (found('port')?.value as number | undefined) ?? DEFAULT_PORT,
    log: logConfig(found),
    logLevel: (found('logLevel')?.value as LogLevel | undefined) ?? 'info',
  };
  const partitions = found('partitions')?.value as number | undefined;
  const maxInputBytes = found('maxInputBytes')?.value as number | undefined;
  if (partitions !== undefined) config.partitions = partitions;
  if (maxInputBytes !== undefined) config.maxInputBytes = maxInputBytes;
  if (ticketLifetimeMs !== undefined) config.ticketLifetimeMs = ticketLifetimeMs;
  const tokens = await loadTokens(found('tokensFile'), env, file);
  if (tokens !== undefined) config.tokens = tokens;
  const tls = await loadTls(found('tlsCert'), found('tlsKey'));
  if (tls !== undefined) config.tls = tls;
  const cluster = clusterConfig(found, config.log);
  if (cluster !== undefined) config.cluster = cluster;
  return config;
}

interface Found {
  value: unknown;
  /** Where it came from, as messages name it. */
  where: string;
}

/** A setting's value from the first source that gives it, parsed; undefined if none does. */
function lookup(key: Key, flags: Flags, env: Env, file: ConfigFile | undefined): Found | undefined {
  const setting: Setting = SETTINGS[key];
  if (flags[setting.flag] !== undefined) return parsed(setting, flags[setting.flag], `--${setting.flag}`);
  if (env[setting.env] !== undefined && env[setting.env] !== '') return parsed(setting, env[setting.env], setting.env);
  if (file === undefined || file.body[key] === undefined) return undefined;
  const found = parsed(setting, file.body[key], `config file ${file.path}: ${key}`);
  return setting.path ? { ...found, value: resolve(dirname(file.path), found.value as string) } : found;
}

function parsed(setting: Setting, value: unknown, where: string): Found {
  return { value: setting.parse(value, where), where };
}

async function readConfigFile(flags: Flags, env: Env): Promise<ConfigFile | undefined> {
  const where = flags.config !== undefined ? '--config' : 'RUNLOG_CONFIG';
  const given = flags.config ?? (env.RUNLOG_CONFIG === '' ? undefined : env.RUNLOG_CONFIG);
  if (given === undefined) return undefined;
  const path = resolve(requirePath(where, given));
  const body = parseJson(await readText(path, `config file ${path} (${where})`), `config file ${path} (${where})`);
  if (!isPlainObject(body)) throw invalidArgument(`config file ${path} (${where}) must hold a JSON object, got ${describe(body)}`);
  const unknown = Object.keys(body).find((key) => !FILE_KEYS.includes(key));
  if (unknown !== undefined)
    throw invalidArgument(`config file ${path} (${where}) has an unknown key ${describe(unknown)}; allowed: ${FILE_KEYS.join(', ')}`);
  return { path, body: body as Record<string, unknown> };
}

/** The embedded file log in `dir` (default ./data), or Kafka when brokers are given; never both. */
function logConfig(found: (key: Key) => Found | undefined): LogConfig {
  const [dir, brokers, topic, clientId] = [found('dir'), found('brokers'), found('topic'), found('clientId')];
  if (brokers === undefined) {
    const kafkaOnly = topic ?? clientId;
    if (kafkaOnly !== undefined)
      throw invalidArgument(`${kafkaOnly.where} names a Kafka setting, but no brokers are given (--brokers or RUNLOG_KAFKA_BROKERS)`);
    return { kind: 'file', dir: (dir?.value as string | undefined) ?? DEFAULT_DIR };
  }
  if (dir !== undefined) throw invalidArgument(`${dir.where} and ${brokers.where} name two logs (a file log and Kafka); give one`);
  const kafka: LogConfig = {
    kind: 'kafka',
    brokers: brokers.value as string[],
    topic: (topic?.value as string | undefined) ?? DEFAULT_TOPIC,
  };
  if (clientId !== undefined) kafka.clientId = clientId.value as string;
  return kafka;
}

/** A cluster node's settings, when a group is named: only on Kafka; the others only with a group. */
function clusterConfig(found: (key: Key) => Found | undefined, log: LogConfig): ClusterConfig | undefined {
  const [group, advertiseUrl, sessionTimeout] = [found('group'), found('advertiseUrl'), found('sessionTimeout')];
  if (group === undefined) {
    const nodeOnly = advertiseUrl ?? sessionTimeout;
    if (nodeOnly !== undefined)
      throw invalidArgument(`${nodeOnly.where} is a cluster node's setting, but no group is given (--group or RUNLOG_GROUP)`);
    return undefined;
  }
  if (log.kind !== 'kafka')
    throw invalidArgument(
      `${group.where} ${describe(group.value)} makes this serve a cluster node, and a cluster shares a Kafka topic: give brokers (--brokers or RUNLOG_KAFKA_BROKERS)`,
    );
  const cluster: ClusterConfig = {
    group: group.value as string,
    sessionTimeoutMs: (sessionTimeout?.value as number | undefined) ?? DEFAULT_SESSION_TIMEOUT_MS,
  };
  if (advertiseUrl !== undefined) cluster.advertiseUrl = advertiseUrl.value as string;
  return cluster;
}

/**
 * Tokens from --tokens FILE; else the environment (RUNLOG_TOKENS_FILE or RUNLOG_TOKENS, not
 * both); else the config file (tokensFile or tokens, not both); else none.
 */
async function loadTokens(tokensFile: Found | undefined, env: Env, file: ConfigFile | undefined): Promise<Tokens | undefined> {
  if (tokensFile?.where === '--tokens') return readTokensFile(tokensFile);
  const inlineEnv = env.RUNLOG_TOKENS === '' ? undefined : env.RUNLOG_TOKENS;
  if (tokensFile?.where === 'RUNLOG_TOKENS_FILE') {
    if (inlineEnv !== undefined) throw invalidArgument('RUNLOG_TOKENS_FILE and RUNLOG_TOKENS are both set; give one');
    return readTokensFile(tokensFile);
  }
  if (inlineEnv !== undefined) return parseTokens(inlineEnv, 'RUNLOG_TOKENS');
  if (file === undefined) return undefined;
  if (tokensFile !== undefined && file.body.tokens !== undefined)
    throw invalidArgument(`config file ${file.path} has both tokensFile and tokens; give one`);
  if (tokensFile !== undefined) return readTokensFile(tokensFile);
  return file.body.tokens === undefined ? undefined : checkTokens(file.body.tokens, `config file ${file.path}: tokens`);
}

async function readTokensFile({ value, where }: Found): Promise<Tokens> {
  const source = `tokens file ${String(value)} (${where})`;
  return parseTokens(await readText(value as string, source), source);
}

/** The certificate and key, both or neither, read and tried together (a key that is not the certificate's is refused here). */
async function loadTls(cert: Found | undefined, key: Found | undefined): Promise<{ cert: Buffer; key: Buffer } | undefined> {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined)
    throw invalidArgument(
      `${(cert ?? key)!.where} is given without ${cert === undefined ? 'a certificate (--tls-cert)' : 'a key (--tls-key)'}; TLS needs both`,
    );
  const tls = { cert: await readBytes(cert), key: await readBytes(key) };
  try {
    createSecureContext(tls);
  } catch (error) {
    throw invalidArgument(
      `${cert.where} ${describe(cert.value)} and ${key.where} ${describe(key.value)} are not a PEM certificate and its key: ${describe(error)}`,
    );
  }
  return tls;
}

async function readBytes({ value, where }: Found): Promise<Buffer> {
  try {
    return await readFile(value as string);
  } catch (error) {
    throw invalidArgument(`${where} ${describe(value)} cannot be read: ${describe(error)}`);
  }
}

async function readText(path: string, source: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw invalidArgument(`${source} cannot be read: ${describe(error)}`);
  }
}

/** JSON text; a fault is shown by its place only: JSON.parse's message quotes the text, which may hold a token. */
function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const position = /at position ([0-9]+)/.exec(String(error))?.[1];
    const lines = position === undefined ? [] : text.slice(0, Number(position)).split('\n');
    const place = lines.length === 0 ? '' : ` (at line ${lines.length}, column ${lines[lines.length - 1]!.length + 1})`;
    throw invalidArgument(`${source} is not valid JSON${place}`);
  }
}

/** An integer from `min` to `max`: a number (config file) or decimal digits (flag, variable, file). */
function integer(min: number, max: number): Parse {
  return (value, where) => {
    const number = typeof value === 'string' && /^[0-9]{1,16}$/.test(value) ? Number(value) : value;
    if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < min || number > max)
      throw invalidArgument(`${where} must be an integer from ${min} to ${max}, got ${describe(value)}`);
    return number;
  };
}

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration: milliseconds (a number, or digits), or digits with a unit: 500ms, 30s, 15m, 12h, 7d. */
function duration(value: unknown, where: string): number {
  const match = typeof value === 'string' ? /^([0-9]{1,15})(ms|s|m|h|d)?$/.exec(value) : null;
  const ms = match === null ? value : Number(match[1]) * UNIT_MS[match[2] ?? 'ms']!;
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0)
    throw invalidArgument(`${where} must be a duration (milliseconds, or a number with ms, s, m, h or d: 7d), got ${describe(value)}`);
  return ms;
}

/** A duration between `min` and `max` ms. */
function bounded(parse: Parse, min: number, max: number): Parse {
  return (value, where) => {
    const ms = parse(value, where) as number;
    if (ms < min || ms > max) throw invalidArgument(`${where} must be from ${min} ms to ${max} ms, got ${describe(value)}`);
    return ms;
  };
}

/** A Kafka consumer group id: a name of at most 255 characters. */
function groupId(value: unknown, where: string): string {
  const group = requireName(where, value);
  if (group.length > 255) throw invalidArgument(`${where} must be at most 255 characters, got ${describe(group)}`);
  return group;
}

/** An http(s) base URL: scheme, host and port only (clients append /v1/...); a trailing slash is dropped. */
function baseUrl(value: unknown, where: string): string {
  const url = typeof value === 'string' && URL.canParse(value) ? new URL(value) : null;
  const bare =
    url !== null &&
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.username === '' &&
    url.password === '' &&
    url.pathname === '/' &&
    url.search === '' &&
    url.hash === '' &&
    !(value as string).includes('?') &&
    !(value as string).includes('#');
  if (!bare)
    throw invalidArgument(
      `${where} must be an http or https URL of scheme, host and port only (http://10.0.0.5:7070), got ${describe(value)}`,
    );
  return url.origin;
}

/** Kafka brokers, host:port each: comma-separated text, or (config file) an array of them. */
function brokerList(value: unknown, where: string): string[] {
  const items = typeof value === 'string' ? value.split(',').map((item) => item.trim()) : value;
  if (!Array.isArray(items) || items.length === 0)
    throw invalidArgument(`${where} must be a comma-separated list of host:port, got ${describe(value)}`);
  return items.map((item: unknown) => {
    if (typeof item !== 'string' || !/^[^\s:,]+:[0-9]{1,5}$/.test(item))
      throw invalidArgument(
        `${where} must be a comma-separated list of host:port, got ${describe(value)} (${describe(item)} is not host:port)`,
      );
    return item;
  });
}
