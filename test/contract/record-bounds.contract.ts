/**
 * Record bounds, on every backend: every record a command writes is bounded before anything
 * is written (field limits by name, then the encoded record against the log's own limit),
 * and what is accepted reads back (replay equals live).
 */
import { wrapLog } from '../support/wrap-log.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { RECORD_HEADROOM_BYTES } from '../../src/queue/queue-options.ts';
import { METADATA_LIMITS } from '../../src/queue/requests.ts';
import { assertReplayEqualsLive, FakeClock, logSize, queueOn, refused, submitOf, type OpenLog } from './fixtures.ts';
import { onCleanup } from '../support/cleanup.ts';

/** A real log that says its records may be at most `maxRecordBytes` (smaller than its own limit). */
export function withRecordLimit(log: EventLog, maxRecordBytes: number): EventLog & { appends: number } {
  const limited = wrapLog(log, {
    maxRecordBytes,
    appends: 0,
    ...(log.appendsInFlight === undefined ? {} : { appendsInFlight: log.appendsInFlight }),
    ...(log.claim === undefined ? {} : { claim: (partition: number) => log.claim!(partition) }),
    append: (partition: number, records: Parameters<EventLog['append']>[1]) => {
      limited.appends++;
      return log.append(partition, records);
    },
  });
  return limited;
}

/** An assertion for assert.rejects: InvalidArgument, its message naming every one of `parts`. */
export const says =
  (...parts: string[]) =>
  (error: unknown): boolean => {
    assert.ok(isRunlogError(error, 'InvalidArgument'), `expected InvalidArgument, got ${String(error)}`);
    for (const part of parts) assert.ok(error.message.includes(part), `the message names ${part}: ${error.message}`);
    return true;
  };

/** `count` metadata entries of `bytes` bytes in all (keys and values, ASCII). */
function metadataOf(count: number, bytes: number): Record<string, string> {
  const metadata: Record<string, string> = {};
  let left = bytes;
  for (let i = 0; i < count; i++) {
    const key = `k${String(i).padStart(4, '0')}`;
    const value = 'v'.repeat(Math.floor((left - key.length * (count - i)) / (count - i)));
    metadata[key] = value;
    left -= key.length + value.length;
  }
  const last = `k${String(count - 1).padStart(4, '0')}`;
  metadata[last] += 'v'.repeat(left);
  return metadata;
}

export function recordBoundsSemantics(name: string, openLog: OpenLog): void {
  describe(`record bounds on ${name}`, () => {
    it('metadata over its byte limit is refused, naming it and the limit, and nothing is written', async (t) => {
      const { queue, log } = await queueOn({ openLog }, t, { partitions: 1 });
      const metadata = metadataOf(4, METADATA_LIMITS.maxBytes + 1);
      await refused(log, 'InvalidArgument', () => queue.submit(submitOf('acme', 't1', { metadata })));
      await assert.rejects(queue.submit(submitOf('acme', 't1', { metadata })), says('metadata', String(METADATA_LIMITS.maxBytes)));
    });

    it('metadata with more keys than the limit is refused, naming it and the limit, and nothing is written', async (t) => {
      const { queue, log } = await queueOn({ openLog }, t, { partitions: 1 });
      const metadata = metadataOf(METADATA_LIMITS.maxKeys + 1, 2 * (METADATA_LIMITS.maxKeys + 1) * 6);
      await refused(log, 'InvalidArgument', () => queue.submit(submitOf('acme', 't1', { metadata })));
      await assert.rejects(queue.submit(submitOf('acme', 't1', { metadata })), says('metadata', String(METADATA_LIMITS.maxKeys)));
    });

    it('a submit with every field at its limit is accepted and reads back the same from the log', async (t) => {
      const { local: queue } = await queueOn({ openLog }, t, { partitions: 1 });
      const long = (c: string): string => c.repeat(1024); // 3 bytes of UTF-8 each
      const request = {
        tenant: long('€'),
        thread: long('ж'),
        agent: long('✓'),
        key: long('ü'),
        input: new Uint8Array(queue.maxInputBytes).fill(7),
        metadata: metadataOf(METADATA_LIMITS.maxKeys, METADATA_LIMITS.maxBytes),
      };
      const ticket = await queue.submit(request);
      const entry = await queue.entry(request.tenant, ticket.entryId);
      assert.equal(entry.input.byteLength, queue.maxInputBytes);
      assert.deepEqual(entry.metadata, request.metadata);
      await assertReplayEqualsLive(queue);
      await assert.rejects(
        queue.submit({ ...request, key: 'other', input: new Uint8Array(queue.maxInputBytes + 1) }),
        says('input', String(queue.maxInputBytes)),
      );
    });

    it("a record within every field limit but over the log's record limit is refused before anything is written", async (t) => {
      const log = withRecordLimit(await openLog(1, t), 64 * 1024);
      const queue = await openRunQueueOnLog(log, { clock: new FakeClock().read });
      onCleanup(t, () => queue.stop());
      const ticket = await queue.submit(submitOf('acme', 't1'));
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 }))!;
      const appends = log.appends;
      const before = await logSize(log);
      const result = new Uint8Array(queue.maxInputBytes); // the largest result, with an error text within its own limit
      await assert.rejects(
        queue.close(taken.lease, { status: 'failed', result, error: 'e'.repeat(40_000) }),
        says('Closed', 'result', 'error', String(64 * 1024)),
      );
      assert.equal(log.appends, appends, 'nothing was appended');
      assert.equal(await logSize(log), before);
      assert.equal((await queue.entry('acme', ticket.entryId)).status, 'open', 'the entry is as it was');
      const closed = await queue.close(taken.lease, { status: 'succeeded', result });
      assert.equal(closed.result!.byteLength, queue.maxInputBytes);
      await assertReplayEqualsLive(queue);
    });

    it('maxInputBytes must fit the log: too large is refused at open; omitted, it is derived so that a submit with every field at its limit fits', async (t) => {
      const log = withRecordLimit(await openLog(1, t), 64 * 1024);
      const fits = 64 * 1024 - RECORD_HEADROOM_BYTES;
      await assert.rejects(openRunQueueOnLog(log, { maxInputBytes: fits + 1 }), says('maxInputBytes', String(fits)));
      const queue = await openRunQueueOnLog(log, { clock: new FakeClock().read });
      onCleanup(t, () => queue.stop());
      assert.equal(queue.maxInputBytes, fits);
      // The largest input beside every other field at its limit (names of 1024 three-byte characters) still fits.
      const long = (c: string): string => c.repeat(1024);
      const metadata = metadataOf(METADATA_LIMITS.maxKeys, METADATA_LIMITS.maxBytes);
      await queue.submit({ tenant: long('€'), thread: long('ж'), agent: long('✓'), key: long('ü'), input: new Uint8Array(fits), metadata });
      await assertReplayEqualsLive(queue);
    });
  });
}
