// The command codec (schemas/commands/): single-object encoding like events, its own fingerprints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  commandSchemaFingerprint,
  commandSchemaFor,
  decodeCommand,
  encodeCommand,
  peekCommandIds,
} from '../../src/events/command-codec.ts';
import { encodeEvent } from '../../src/events/codec.ts';
import type { CancelCommand, RunlogCommand, SubmitCommand } from '../../src/events/command-types.ts';
import { isRunlogError, type ErrorCode } from '../../src/errors.ts';
import { GOLDEN_COMMANDS } from './golden-commands.ts';
import { GOLDEN_EVENTS } from './golden-events.ts';
import { anyCommand } from './arbitraries.ts';
import { avroString, singleObject } from './avro-bytes.ts';

const submit = GOLDEN_COMMANDS['SubmitCommand.v1.bin'] as SubmitCommand;
const cancel = GOLDEN_COMMANDS['CancelCommand.v1.bin'] as CancelCommand;

function fails(code: ErrorCode, fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (e: unknown) => isRunlogError(e, code) && message.test(e.message));
}

test('property: any command round-trips', () => {
  fc.assert(
    fc.property(anyCommand, (command) => assert.deepEqual(decodeCommand(encodeCommand(command)), command)),
    { numRuns: 300 },
  );
});

test('a CancelCommand body is plain Avro binary in schema order (as a Java BinaryMessageEncoder writes it)', () => {
  const body = [...avroString(cancel.requestId), ...avroString(cancel.tenant), ...avroString(cancel.thread), ...avroString(cancel.entryId)];
  const expected = singleObject(commandSchemaFingerprint('CancelCommand'), [...body, 2, ...avroString(cancel.reason!)]);
  assert.deepEqual(encodeCommand(cancel), expected);
  assert.equal(commandSchemaFor('CancelCommand').namespace, 'runlog.commands');
});

test('an event is not a command, nor a command an event: Corrupt, naming the unknown fingerprint', () => {
  fails('Corrupt', () => decodeCommand(encodeEvent(GOLDEN_EVENTS['Leased.v1.bin']!)), /unknown writer schema fingerprint/);
  fails('Corrupt', () => decodeCommand(new Uint8Array(3)), /command record of 3 bytes is shorter/);
});

test('commands that would not read back are InvalidArgument, naming the field', () => {
  fails('InvalidArgument', () => encodeCommand({ ...submit, priority: 2 ** 31 }), /priority = 2147483648/);
  fails('InvalidArgument', () => encodeCommand({ ...submit, strategy: 'later' as 'reject' }), /strategy = "later"/);
  fails('InvalidArgument', () => encodeCommand({ ...cancel, reason: 'x\udc00' }), /reason holds a lone UTF-16 surrogate/);
  fails('InvalidArgument', () => encodeCommand({ type: 'Submitted' } as unknown as RunlogCommand), /command of unknown type "Submitted"/);
  fails('InvalidArgument', () => decodeCommand('x' as unknown as Uint8Array), /decodeCommand needs a Uint8Array/);
});

test('peekCommandIds reads request id, tenant and thread of a command whose body is damaged past them', () => {
  const bytes = encodeCommand(submit);
  const cut = bytes.subarray(0, bytes.length - 20);
  fails('Corrupt', () => decodeCommand(cut), /truncated or malformed/);
  const ids = { requestId: submit.requestId, tenant: submit.tenant, thread: submit.thread };
  assert.deepEqual(peekCommandIds(cut), { type: 'SubmitCommand', ...ids });
  assert.deepEqual(peekCommandIds(encodeCommand(cancel)), {
    type: 'CancelCommand',
    requestId: 'req-7a2',
    tenant: 'acme',
    thread: 'ticket-42',
  });
  assert.equal(peekCommandIds(bytes.subarray(0, 14)), null, 'cut inside the request id');
  assert.equal(peekCommandIds(encodeEvent(GOLDEN_EVENTS['Leased.v1.bin']!)), null, 'an event: not a command schema');
  assert.equal(peekCommandIds(Uint8Array.of(1, 2, 3)), null);
  assert.equal(peekCommandIds(new TextEncoder().encode('{"requestId":"r1","tenant":"acme"}')), null, 'JSON, not Avro');
});
