import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunlogError, isRunlogError } from '../../src/errors.ts';
import type { Entry } from '../../src/queue/types.ts';
import {
  SubmitBody,
  TakeBody,
  closeRequestFromJson,
  closeRequestToJson,
  compileCheck,
  entryFromJson,
  entryToJson,
  fromBase64,
  healthFromJson,
  healthToJson,
  submitFromJson,
  submitToJson,
  toBase64,
} from '../../src/wire/index.ts';

function invalid(action: () => unknown, pattern: RegExp): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(isRunlogError(error, 'InvalidArgument'), String(error));
    assert.match(error.message, pattern);
    return true;
  });
}

const entry: Entry = {
  entryId: '0-abc',
  tenant: 'acme',
  thread: 't',
  agent: 'build',
  input: new Uint8Array([0, 1, 2, 255]),
  key: null,
  priority: 0,
  notBefore: null,
  deadline: null,
  maxAttempts: 10,
  metadata: { a: 'b' },
  submittedAt: 1,
  status: 'closed',
  lease: null,
  attempts: [{ runId: 'r', attempt: 1, epoch: 1, startedAt: 2 }],
  deferredAttempts: 0,
  outcome: 'succeeded',
  result: new TextEncoder().encode('done'),
  error: null,
  closedAt: 3,
};

describe('wire: conversions', () => {
  it('base64 round-trips any bytes, and refuses what is not standard padded base64, naming the field', () => {
    const bytes = new Uint8Array(256).map((_, i) => i);
    assert.deepEqual(fromBase64('body.input', toBase64(bytes)), bytes);
    assert.deepEqual(fromBase64('x', ''), new Uint8Array());
    for (const bad of ['QQ', 'Q===', 'a b=', '!!!!', 'QR==', 'QQ==QQ==', '-_8=']) {
      invalid(() => fromBase64('body.input', bad), /^body\.input must be standard base64/);
    }
  });

  it('an entry survives JSON: bytes as base64', () => {
    const json = JSON.parse(JSON.stringify(entryToJson(entry)));
    assert.equal(json.input, 'AAEC/w==');
    assert.equal(json.result, 'ZG9uZQ==');
    assert.deepEqual(entryFromJson(json), entry);
  });

  it('a submission gives bytes as input, a string as inputText, exactly one', () => {
    const base = { tenant: 'a', thread: 't', agent: 'g' };
    assert.deepEqual(submitToJson({ ...base, input: 'hé' }), { ...base, inputText: 'hé' });
    assert.deepEqual(submitToJson({ ...base, input: new Uint8Array([1]) }), { ...base, input: 'AQ==' });
    assert.deepEqual(submitFromJson({ ...base, inputText: 'hé' }), { ...base, input: 'hé' });
    assert.deepEqual(submitFromJson({ ...base, input: 'AQ==' }), { ...base, input: new Uint8Array([1]) });
    invalid(() => submitFromJson({ ...base, input: 'AQ==', inputText: 'x' }), /both input and inputText/);
    invalid(() => submitFromJson(base), /must give input \(base64\) or inputText/);
    invalid(() => submitFromJson({ ...base, input: 'A' }), /body\.input must be standard base64/);
  });

  it('a close request gives at most one of result and resultText', () => {
    assert.deepEqual(closeRequestToJson({ status: 'succeeded', result: 'ok' }), { status: 'succeeded', resultText: 'ok' });
    assert.deepEqual(closeRequestToJson({ status: 'failed', error: 'e' }), { status: 'failed', error: 'e' });
    assert.deepEqual(closeRequestFromJson({ status: 'succeeded', result: 'AQ==' }), { status: 'succeeded', result: new Uint8Array([1]) });
    assert.deepEqual(closeRequestFromJson({ status: 'succeeded' }), { status: 'succeeded' });
    invalid(() => closeRequestFromJson({ status: 'succeeded', result: 'AQ==', resultText: 'x' }), /both result and resultText/);
    invalid(() => closeRequestFromJson({ status: 'succeeded', result: '%%' }), /body\.request\.result must be standard base64/);
  });

  it("a partition's error travels as a problem body and comes back a RunlogError", () => {
    const health = { partition: 2, mode: 'down' as const, error: new RunlogError('Fenced', 'fenced by another writer') };
    const json = JSON.parse(JSON.stringify(healthToJson(health)));
    assert.equal(json.error.code, 'Fenced');
    const back = healthFromJson(json);
    assert.ok(isRunlogError(back.error, 'Fenced'));
    assert.equal(back.error.message, 'fenced by another writer');
    assert.deepEqual(healthFromJson(healthToJson({ partition: 0, mode: 'serving' })), { partition: 0, mode: 'serving' });
  });

  it('a compiled check names the field by its path and shows the bad value', () => {
    const take = compileCheck(TakeBody, 'body');
    const submit = compileCheck(SubmitBody, 'body');
    const ok = { agents: ['a'], holder: 'h', ttlMs: 1000 };
    assert.deepEqual(take(ok), ok);
    const cases: [unknown, RegExp][] = [
      [{ ...ok, ttlMs: 1.5 }, /^body\.ttlMs must be an integer, got 1\.5$/],
      [{ ...ok, ttlMs: '1000' }, /^body\.ttlMs must be an integer, got "1000"$/],
      [{ agents: ['a'], holder: 'h' }, /^body\.ttlMs is missing/],
      [{ ...ok, agents: ['a', 7] }, /^body\.agents\[1\] must be a string, got 7$/],
      [{ ...ok, waitMs: 60_001 }, /^body\.waitMs must be an integer >= 0 <= 60000, got 60001$/],
      [{ ...ok, timeout: 5 }, /^body\.timeout is not a field this request takes \(unknown field\), got 5$/],
      [null, /^body must be an object, got null$/],
      [[], /^body must be an object, got \[\]$/],
    ];
    for (const [value, pattern] of cases) invalid(() => take(value), pattern);
    invalid(
      () => submit({ tenant: 'a', thread: 't', agent: 'g', inputText: 'x', strategy: 'later' }),
      /^body\.strategy must be "enqueue" or "reject", got "later"$/,
    );
    invalid(
      () => submit({ tenant: 'a', thread: 't', agent: 'g', inputText: 'x', metadata: { k: 1 } }),
      /^body\.metadata\.k must be a string, got 1$/,
    );
  });
});
