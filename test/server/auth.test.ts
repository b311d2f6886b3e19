/**
 * Bearer tokens (src/server/auth.ts): a table of malformed token lists, each refused at
 * load with InvalidArgument naming the bad entry and never showing a token; then
 * authentication: the right caller for each token (given plainly or as a SHA-256), and one
 * and the same Unauthorized for a missing, malformed or unknown token.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { isRunlogError, RunlogError } from '../../src/errors.ts';
import { ANONYMOUS, checkTokens, openAuthenticator, parseTokens, type TokenConfig } from '../../src/server/auth.ts';

const SECRET = 'p-0123456789abcdef-secret';
const OTHER = 'w-fedcba9876543210-secret';
const ok = (extra: Record<string, unknown> = {}) => ({ name: 'web', token: SECRET, tenants: ['acme'], roles: ['producer'], ...extra });
const without = (key: string) => Object.fromEntries(Object.entries(ok()).filter(([k]) => k !== key));

function refusal(run: () => unknown): RunlogError {
  try {
    run();
  } catch (error) {
    if (error instanceof RunlogError) return error;
    throw error;
  }
  assert.fail('expected a refusal');
}

describe('tokens: malformed lists are refused at load', () => {
  // [what, JSON text, what the message must name]
  const rows: [string, string, RegExp][] = [
    ['not JSON', `[{"name":"web","token":"${SECRET}"`, /RUNLOG_TOKENS is not valid JSON/],
    ['not an array', JSON.stringify(ok()), /RUNLOG_TOKENS must be a JSON array of tokens .* got an object$/],
    ['an empty array', '[]', /RUNLOG_TOKENS holds no tokens/],
    [
      'an entry not an object',
      JSON.stringify([ok(), SECRET]),
      /RUNLOG_TOKENS\[1\] must be an object \{ name, token \| sha256, tenants, roles \}, got a string$/,
    ],
    ['a list of strings', JSON.stringify([SECRET]), /RUNLOG_TOKENS\[0\] must be an object .* got a string$/],
    ['a string', JSON.stringify(SECRET), /RUNLOG_TOKENS must be a JSON array of tokens .* got a string$/],
    ['an unknown key', JSON.stringify([ok({ tenant: 'acme' })]), /RUNLOG_TOKENS\[0\] has an unknown option "tenant"/],
    ['no name', JSON.stringify([without('name')]), /RUNLOG_TOKENS\[0\]\.name must be a non-empty string, got undefined/],
    ['an empty name', JSON.stringify([ok({ name: '' })]), /RUNLOG_TOKENS\[0\]\.name must be a non-empty string, got ""/],
    [
      'neither token nor sha256',
      JSON.stringify([without('token')]),
      /RUNLOG_TOKENS\[0\] \(name "web"\) must have exactly one of token and sha256/,
    ],
    ['both token and sha256', JSON.stringify([ok({ sha256: 'a'.repeat(64) })]), /RUNLOG_TOKENS\[0\] \(name "web"\) must have exactly one/],
    [
      'a token not a string',
      JSON.stringify([ok({ token: 1234567890123456 })]),
      /\[0\] \(name "web"\): token must be a string, got a number/,
    ],
    ['a short token', JSON.stringify([ok({ token: 'short-secret' })]), /\[0\] \(name "web"\): token must be at least 16 characters/],
    ['a token with a space', JSON.stringify([ok({ token: 'has a space in it, secret' })]), /\[0\] \(name "web"\): token may hold only/],
    ['a token with non-ASCII', JSON.stringify([ok({ token: 'secret-é-0123456789' })]), /\[0\] \(name "web"\): token may hold only/],
    [
      'a sha256 of 63 digits',
      JSON.stringify([without('token')].map((t) => ({ ...t, sha256: 'a'.repeat(63) }))),
      /sha256 must be 64 hexadecimal/,
    ],
    [
      'a sha256 not hex',
      JSON.stringify([without('token')].map((t) => ({ ...t, sha256: 'g'.repeat(64) }))),
      /sha256 must be 64 hexadecimal/,
    ],
    [
      'no tenants',
      JSON.stringify([without('tenants')]),
      /\[0\] \(name "web"\)\.tenants must be a non-empty array of tenant names, or "\*"/,
    ],
    ['empty tenants', JSON.stringify([ok({ tenants: [] })]), /\(name "web"\)\.tenants must be a non-empty array .* got \[\]/],
    ['tenants "all"', JSON.stringify([ok({ tenants: 'all' })]), /\(name "web"\)\.tenants must be .* got "all"/],
    [
      'a tenant not a name',
      JSON.stringify([ok({ tenants: ['acme', ''] })]),
      /\(name "web"\)\.tenants\[1\] must be a non-empty string, got ""/,
    ],
    [
      'no roles',
      JSON.stringify([without('roles')]),
      /\(name "web"\)\.roles must be a non-empty array of producer, worker, admin, got undefined/,
    ],
    ['empty roles', JSON.stringify([ok({ roles: [] })]), /\(name "web"\)\.roles must be a non-empty array .* got \[\]/],
    [
      'an unknown role',
      JSON.stringify([ok({ roles: ['producer', 'root'] })]),
      /\(name "web"\)\.roles\[1\] must be one of producer, worker, admin, got "root"/,
    ],
    ['roles as a string', JSON.stringify([ok({ roles: 'admin' })]), /\(name "web"\)\.roles must be a non-empty array .* got "admin"/],
    [
      'a name twice',
      JSON.stringify([ok(), ok({ token: OTHER })]),
      /RUNLOG_TOKENS\[1\] has the name "web" of RUNLOG_TOKENS\[0\]; names must be unique/,
    ],
    [
      'a token twice',
      JSON.stringify([ok(), ok({ name: 'other', sha256: createHash('sha256').update(SECRET).digest('hex'), token: undefined })]),
      /RUNLOG_TOKENS\[1\] \(name "other"\) has the same token as RUNLOG_TOKENS\[0\]; tokens must be unique/,
    ],
  ];
  for (const [what, text, names] of rows) {
    it(what, () => {
      const error = refusal(() => parseTokens(text, 'RUNLOG_TOKENS'));
      assert.equal(error.code, 'InvalidArgument');
      assert.match(error.message, names);
      for (const token of [SECRET, OTHER, 'short-secret', 'has a space in it, secret', 'secret-é-0123456789'])
        assert.ok(!error.message.includes(token), `the message shows a token: ${error.message}`);
    });
  }

  it('refuses openAuthenticator arguments that are no list of tokens', () => {
    // [argument, the message]
    const rows: [unknown, RegExp][] = [
      [null, /^tokens must be a JSON array of tokens .* got null$/],
      [SECRET, /^tokens must be a JSON array of tokens .* got a string$/],
      [new Map([['web', SECRET]]), /^tokens must be a JSON array of tokens .* got an object$/],
      [{ records: [] }, /^tokens must be a JSON array of tokens .* got an object$/],
      [[], /^tokens holds no tokens/],
      [[[SECRET]], /^tokens\[0\] must be an object .* got an array$/],
    ];
    for (const [argument, message] of rows) {
      const error = refusal(() => openAuthenticator(argument as TokenConfig[]));
      assert.equal(error.code, 'InvalidArgument');
      assert.match(error.message, message);
      assert.ok(!error.message.includes(SECRET));
    }
  });

  it('checks TokenConfig objects given to openAuthenticator the same way, naming them "tokens"', () => {
    const error = refusal(() => openAuthenticator([ok({ roles: ['nobody'] }) as unknown as TokenConfig]));
    assert.match(error.message, /^tokens\[0\] \(name "web"\)\.roles\[0\] must be one of producer, worker, admin, got "nobody"$/);
  });
});

describe('tokens: authentication', () => {
  const tokens = checkTokens(
    [
      ok(),
      {
        name: 'worker',
        sha256: createHash('sha256').update(OTHER).digest('hex').toUpperCase(),
        tenants: ['acme', 'beta'],
        roles: ['worker'],
      },
      { name: 'ops', token: 'ops-token-0123456789+/=', tenants: '*', roles: ['admin', 'producer'] },
    ],
    'tokens file t.json',
  );
  const auth = openAuthenticator(tokens);

  it('answers the caller of each token, given plainly or as a SHA-256', () => {
    assert.equal(auth.required, true);
    const web = auth.authenticate(`Bearer ${SECRET}`);
    assert.deepEqual([web.name, [...web.roles], web.tenants], ['web', ['producer'], new Set(['acme'])]);
    const worker = auth.authenticate(`bearer   ${OTHER} `);
    assert.deepEqual([worker.name, [...worker.roles], worker.tenants], ['worker', ['worker'], new Set(['acme', 'beta'])]);
    const ops = auth.authenticate('Bearer ops-token-0123456789+/=');
    assert.deepEqual([ops.name, [...ops.roles].sort(), ops.tenants], ['ops', ['admin', 'producer'], 'all']);
  });

  it('refuses a missing, malformed or unknown token with one and the same Unauthorized', () => {
    const headers = [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      SECRET,
      `Basic ${SECRET}`,
      `Bearer ${SECRET} ${SECRET}`,
      `Bearer ${SECRET.slice(0, -1)}`,
      `Bearer ${SECRET}x`,
      `Bearer ${SECRET.toUpperCase()}`,
      `Bearer ${createHash('sha256').update(OTHER).digest('hex')}`,
      'Bearer unknown-token-0123456789',
    ];
    const messages = new Set<string>();
    for (const header of headers) {
      const error = refusal(() => auth.authenticate(header));
      assert.ok(isRunlogError(error, 'Unauthorized'), `${header}: ${error.code}`);
      assert.equal(error.retriable, false);
      messages.add(error.message);
    }
    assert.deepEqual([...messages], ['a valid bearer token is required (authorization: Bearer <token>)']);
  });

  it('without tokens, every caller is anonymous with every role and tenant', () => {
    const open = openAuthenticator();
    assert.equal(open.required, false);
    assert.equal(open.authenticate(undefined), ANONYMOUS);
    assert.equal(open.authenticate('Bearer whatever'), ANONYMOUS);
    assert.deepEqual([[...ANONYMOUS.roles], ANONYMOUS.tenants], [['producer', 'worker', 'admin'], 'all']);
  });
});
