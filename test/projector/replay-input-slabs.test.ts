/**
 * A replay's decoder copies bytes fields of more than 64 bytes into shared slabs
 * (src/events/fold-slabs.ts), never written again, and a catch-up moves the inputs its open
 * entries keep out of them (src/projector/replay.ts), so that no slab stays alive for an entry
 * left open. Checked on the decoder itself and on a RunQueue reopened over a real file log.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeEvent, encodeEvent, eventFoldDecoder } from '../../src/events/codec.ts';
import { isFoldSlab } from '../../src/events/fold-slabs.ts';

/** Whether `bytes` is a view of one of the replay decoder's slabs. */
const inFoldSlab = (bytes: Uint8Array): boolean => isFoldSlab(bytes.buffer);
import type { Closed, Submitted } from '../../src/events/types.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { FOLD_UNREAD } from '../../projections/partition-view.ts';
import { submittedEvent } from '../../bench/submitted-event.ts';
import { FakeClock, submitOf } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

const fold = eventFoldDecoder(FOLD_UNREAD);

/** `size` bytes, each its index plus `seed` (so two inputs of one size differ). */
function bytesOf(size: number, seed: number): Uint8Array {
  return Uint8Array.from({ length: size }, (_, i) => (i + seed) & 0xff);
}

/** The record in a read buffer with bytes before and after it, as the file log's reader holds it. */
function folded(event: Submitted | Closed): Submitted | Closed {
  const bytes = encodeEvent(event);
  const buf = Buffer.concat([Buffer.from('before'), bytes, Buffer.from('after')]);
  return fold(buf, 6, 6 + bytes.length) as Submitted | Closed;
}

/** A Submitted of `input` (bench/submitted-event.ts: the tests' own Submitted). */
function submitted(input: Uint8Array): Submitted {
  return submittedEvent({ tenant: 'acme', thread: 'build-1', entryId: '0-1', seq: 1, at: AT }, { input });
}

const AT = 1_700_000_000_000;

describe("a replay's decoder", () => {
  it('copies inputs and results of more than 64 bytes into its slabs, smaller ones into arrays of their own, every byte as decodeEvent reads it', () => {
    for (const size of [0, 1, 64, 65, 100, 4095, 4096, 70_000]) {
      const event = folded(submitted(bytesOf(size, 3))) as Submitted;
      assert.deepEqual(event, decodeEvent(encodeEvent(submitted(bytesOf(size, 3)))), `input of ${size}`);
      assert.equal(inFoldSlab(event.input), size > 64 && size < 4096, `input of ${size} in a slab`);
    }
    const result = bytesOf(200, 9);
    const closed = folded({
      type: 'Closed',
      tenant: 'acme',
      thread: 'build-1',
      entryId: '0-1',
      at: AT,
      outcome: 'succeeded',
      result,
      error: null,
      deferredAttempts: 0,
    } as Closed);
    assert.deepEqual((closed as Closed).result, result);
    assert.ok(inFoldSlab((closed as Closed).result!));
  });

  it('never writes a slab again: a value read early keeps its bytes while many more are read after it', () => {
    const first = (folded(submitted(bytesOf(100, 1))) as Submitted).input;
    for (let i = 0; i < 5_000; i++) folded(submitted(bytesOf(65 + (i % 500), i)));
    assert.deepEqual(first, bytesOf(100, 1));
    assert.ok(inFoldSlab(first));
  });
});

describe('a RunQueue reopened over the file log', () => {
  it("replays its open entries' inputs out of the decoder's slabs, each into an array of its own, and answers every input as submitted", async (t) => {
    const dir = await scratchDir(t, 'runlog-input-slabs-');
    const clock = new FakeClock();
    const open = () =>
      openRunQueue({ log: { kind: 'file', dir }, partitions: 2, clock: clock.read, snapshots: false, closedCacheBytes: 0 });
    const queue = await open();
    const inputs = new Map<string, Uint8Array>();
    for (let i = 0; i < 300; i++) {
      const input = bytesOf(65 + ((i * 37) % 400), i);
      const { entryId } = await queue.submit(submitOf('acme', `thread-${i}`, { input }));
      inputs.set(entryId, input);
      if (i % 3 !== 0) {
        const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 });
        await queue.startAttempt(taken!.lease, `run-${i}`);
        await queue.close(taken!.lease, { status: 'succeeded' });
      }
      clock.advance(1);
    }
    await queue.stop();

    const again = await open();
    onCleanup(t, () => again.stop());
    const openEntries = again.views().flatMap((view) => [...view.entries.values()]);
    assert.equal(openEntries.length, 100);
    for (const entry of openEntries) {
      assert.deepEqual(entry.input, inputs.get(entry.entryId), entry.entryId);
      assert.ok(!inFoldSlab(entry.input), `${entry.entryId}'s input was moved out of the slabs`);
      // Into an array of its own: a buffer shared with other open entries would outlive most of them.
      assert.equal(entry.input.buffer.byteLength, entry.input.byteLength, `${entry.entryId}'s input has a buffer of its own`);
    }
    for (const [entryId, input] of inputs) assert.deepEqual((await again.entry('acme', entryId))!.input, input, entryId);
  });
});
