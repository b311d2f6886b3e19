/**
 * Bearer tokens: who may call the service, for which tenants, in which roles.
 *
 * Tokens are configured as a JSON array (a file, or the RUNLOG_TOKENS variable) of
 *   { "name": "billing-web", "token": "…" | "sha256": "<64 hex digits>", "tenants": ["acme"] | "*", "roles": ["producer"] }
 * and checked once, at load: a bad entry is InvalidArgument naming its place and name,
 * never its token. Only the SHA-256 of each token is kept.
 *
 * Constant time: a presented token is hashed, and its hash compared with timingSafeEqual
 * against every configured hash, always all of them (no early exit), so neither the
 * answer's time nor its content says how much of a token was right or which one nearly
 * matched. Every refusal is the same Unauthorized, whether the header was missing,
 * malformed or named no token.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { RunlogError, invalidArgument } from '../errors.ts';
import { describe, isArray, isPlainObject, readArray, requireName, requireObject } from '../validation/index.ts';
import { ROLES, type Authenticator, type Caller, type Role } from './types.ts';

/** One configured token as written in the tokens file (exactly one of token and sha256). */
export interface TokenConfig {
  name: string;
  token?: string;
  sha256?: string;
  tenants: readonly string[] | '*';
  roles: readonly Role[];
}

/** A checked token: its name, the SHA-256 of the token, and what it may do. */
export interface TokenRecord {
  readonly name: string;
  readonly hash: Buffer;
  readonly caller: Caller;
}

/** A checked, non-empty list of tokens (from parseTokens or checkTokens). */
export class Tokens {
  readonly records: readonly TokenRecord[];
  /** @internal use parseTokens or checkTokens */
  constructor(records: readonly TokenRecord[]) {
    this.records = records;
  }
}

/** Tokens shorter than this are refused: a short token is a guessable one. */
export const MIN_TOKEN_LENGTH = 16;

const TOKEN_KEYS = ['name', 'token', 'sha256', 'tenants', 'roles'] as const;
/** RFC 6750's b64token: what may follow `Bearer ` in an authorization header. */
const TOKEN_CHARS = /^[A-Za-z0-9\-._~+/]+=*$/;
const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
const BEARER = /^Bearer +([^ ]+) *$/i;
const REFUSAL = 'a valid bearer token is required (authorization: Bearer <token>)';

/** The caller of a server without tokens (it listens on loopback only). */
export const ANONYMOUS: Caller = Object.freeze({ name: 'anonymous', roles: new Set<Role>(ROLES), tenants: 'all' as const });

/**
 * The authenticator over `tokens` (TokenConfig objects, checked here, or Tokens checked
 * by parseTokens). Without tokens (undefined) every caller is ANONYMOUS and `required` is false.
 */
export function openAuthenticator(tokens?: Tokens | readonly TokenConfig[]): Authenticator {
  if (tokens === undefined) return { required: false, authenticate: () => ANONYMOUS };
  const { records } = tokens instanceof Tokens ? tokens : checkTokens(tokens, 'tokens');
  return { required: true, authenticate: (authorization) => authenticate(records, authorization) };
}

/** Tokens from JSON text (a file's content, RUNLOG_TOKENS); `source` names where the text came from in messages. */
export function parseTokens(text: string, source: string): Tokens {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text near the fault, which may be a token.
    throw invalidArgument(`${source} is not valid JSON (a JSON array of tokens { name, token | sha256, tenants, roles })`);
  }
  return checkTokens(value, source);
}

/** Checks a list of token configs: a non-empty array, each entry valid, names and tokens unique. */
export function checkTokens(value: unknown, source: string): Tokens {
  // Never describe() the list or an entry here: what is wrong may be a token in the wrong place.
  if (!isArray(value))
    throw invalidArgument(`${source} must be a JSON array of tokens { name, token | sha256, tenants, roles }, got ${kindOf(value)}`);
  const items = readArray(source, value);
  if (items.length === 0) throw invalidArgument(`${source} holds no tokens (leave tokens unset to serve loopback only, without tokens)`);
  const records = items.map((item, i) => checkToken(item, `${source}[${i}]`));
  rejectDuplicates(records, source);
  return new Tokens(records);
}

function checkToken(value: unknown, place: string): TokenRecord {
  if (!isPlainObject(value))
    throw invalidArgument(`${place} must be an object { name, token | sha256, tenants, roles }, got ${kindOf(value)}`);
  const body = requireObject(place, value, TOKEN_KEYS);
  const name = requireName(`${place}.name`, body.name);
  const where = `${place} (name ${describe(name)})`;
  return {
    name,
    hash: tokenHash(body, where),
    caller: Object.freeze({ name, roles: checkRoles(body.roles, where), tenants: checkTenants(body.tenants, where) }),
  };
}

/** The SHA-256 of the token, from `token` or `sha256`. Messages never show a token. */
function tokenHash(body: Partial<Record<(typeof TOKEN_KEYS)[number], unknown>>, where: string): Buffer {
  if ((body.token === undefined) === (body.sha256 === undefined))
    throw invalidArgument(`${where} must have exactly one of token and sha256`);
  if (body.sha256 !== undefined) {
    if (typeof body.sha256 !== 'string' || !SHA256_HEX.test(body.sha256))
      throw invalidArgument(`${where}: sha256 must be 64 hexadecimal digits (the SHA-256 of the token)`);
    return Buffer.from(body.sha256, 'hex');
  }
  const token = body.token;
  if (typeof token !== 'string') throw invalidArgument(`${where}: token must be a string, got ${kindOf(token)}`);
  if (token.length < MIN_TOKEN_LENGTH) throw invalidArgument(`${where}: token must be at least ${MIN_TOKEN_LENGTH} characters`);
  if (!TOKEN_CHARS.test(token))
    throw invalidArgument(`${where}: token may hold only letters, digits and - . _ ~ + / (then = padding), as a bearer token does`);
  return sha256(token);
}

function checkRoles(value: unknown, where: string): ReadonlySet<Role> {
  const items = readArray(`${where}.roles`, value, `a non-empty array of ${ROLES.join(', ')}`);
  if (items.length === 0) throw invalidArgument(`${where}.roles must be a non-empty array of ${ROLES.join(', ')}, got []`);
  for (const [i, role] of items.entries()) {
    if (!(ROLES as readonly unknown[]).includes(role))
      throw invalidArgument(`${where}.roles[${i}] must be one of ${ROLES.join(', ')}, got ${describe(role)}`);
  }
  return new Set(items as Role[]);
}

function checkTenants(value: unknown, where: string): ReadonlySet<string> | 'all' {
  if (value === '*') return 'all';
  const items = readArray(`${where}.tenants`, value, 'a non-empty array of tenant names, or "*" for every tenant');
  if (items.length === 0)
    throw invalidArgument(`${where}.tenants must be a non-empty array of tenant names, or "*" for every tenant, got []`);
  return new Set(items.map((tenant, i) => requireName(`${where}.tenants[${i}]`, tenant)));
}

function rejectDuplicates(records: readonly TokenRecord[], source: string): void {
  records.forEach((record, i) => {
    const earlier = records.findIndex((other) => other.name === record.name);
    if (earlier < i)
      throw invalidArgument(`${source}[${i}] has the name ${describe(record.name)} of ${source}[${earlier}]; names must be unique`);
    const same = records.findIndex((other) => other.hash.equals(record.hash));
    if (same < i)
      throw invalidArgument(
        `${source}[${i}] (name ${describe(record.name)}) has the same token as ${source}[${same}]; tokens must be unique`,
      );
  });
}

/** What a value is, without showing it (it may be a token). */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The caller whose token the header presents; Unauthorized (one message for every reason) otherwise. */
function authenticate(records: readonly TokenRecord[], authorization: string | undefined): Caller {
  const token = typeof authorization === 'string' ? BEARER.exec(authorization)?.[1] : undefined;
  const hash = sha256(token ?? '');
  let found: TokenRecord | undefined;
  // Every hash is compared, whether or not one matched already (see the header comment).
  for (const record of records) {
    if (timingSafeEqual(record.hash, hash) && token !== undefined) found = record;
  }
  if (found === undefined) throw new RunlogError('Unauthorized', REFUSAL);
  return found.caller;
}
