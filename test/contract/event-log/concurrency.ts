/** EventLog contract, many callers at once: buffers reused right after append, concurrent appends. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertIncreasing, collect, rec, text } from '../log-records.ts';
import type { LogUnderTest } from './log-under-test.ts';

export function concurrentCallers({ fresh }: LogUnderTest): void {
  describe('ownership of the bytes', () => {
    it('keeps what was appended when the caller reuses its buffers right after the call', async (t) => {
      // The later appends may wait for the first one's group, holding their records meanwhile.
      const log = await fresh(t);
      const values = ['one', 'two', 'six'];
      const buffers = [Buffer.from(values[0]!), new TextEncoder().encode(values[1]), Buffer.from(values[2]!)];
      const appends = buffers.map((value, i) => log.append(0, [{ key: `k${i}`, value }]));
      for (const buffer of buffers) buffer.fill(0x78);
      await Promise.all(appends);
      assert.deepEqual((await collect(log.read(0, 0n))).map(text), values);
    });
  });

  describe('concurrency', () => {
    it('concurrent appends from many callers get distinct increasing offsets, all readable', async (t) => {
      const log = await fresh(t);
      const callers = 64;
      const rounds = 8;
      const written = new Map<bigint, string>();
      await Promise.all(
        Array.from({ length: callers }, async (_, c) => {
          let last = -1n;
          for (let r = 0; r < rounds; r++) {
            const batch = Array.from({ length: 1 + ((c + r) % 3) }, (_, i) => rec(`c${c}/r${r}/${i}`, `v${c}.${r}.${i}`));
            const offsets = await log.append(0, batch);
            assert.equal(offsets.length, batch.length);
            assertIncreasing(offsets);
            assert.ok(offsets[0]! > last, 'a caller sees its offsets grow');
            last = offsets[offsets.length - 1]!;
            offsets.forEach((o, i) => {
              assert.ok(!written.has(o), `offset ${o} handed out twice`);
              written.set(o, batch[i]!.key);
            });
          }
        }),
      );
      const records = await collect(log.read(0, 0n));
      assertIncreasing(records.map((r) => r.offset));
      assert.equal(records.length, written.size);
      for (const r of records) {
        assert.equal(written.get(r.offset), r.key);
        assert.equal(text(r), `v${r.key.slice(1).replace(/\/r/, '.').replace('/', '.')}`);
      }
    });
  });
}
