/** EventLog contract, tail: existing records, later appends, and the abort signal. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { collect, rec } from '../log-records.ts';
import type { LogUnderTest } from './log-under-test.ts';

export function tail({ fresh }: LogUnderTest): void {
  describe('tail', () => {
    it('sees the records there, then later appends, and ends when the signal aborts', async (t) => {
      const log = await fresh(t);
      await log.append(0, [rec('a', '1')]);
      const controller = new AbortController();
      const seen: string[] = [];
      const tailing = (async () => {
        for await (const record of log.tail(0, 0n, { signal: controller.signal })) {
          seen.push(record.key);
          if (seen.length === 1) await log.append(0, [rec('b', '2'), rec('c', '3')]);
          if (seen.length === 3) controller.abort();
        }
      })();
      await tailing;
      assert.deepEqual(seen, ['a', 'b', 'c']);
    });

    it('wakes on an append made while it waits; an abort while waiting ends it', async (t) => {
      const log = await fresh(t);
      const controller = new AbortController();
      const iterator = log.tail(0, 0n, { signal: controller.signal })[Symbol.asyncIterator]();
      const pending = iterator.next();
      await log.append(1, [rec('elsewhere', 'x')]);
      await log.append(0, [rec('late', 'y')]);
      const first = await pending;
      assert.equal(first.done, false);
      assert.equal(first.done === false && first.value.key, 'late');
      const waiting = iterator.next();
      controller.abort();
      assert.equal((await waiting).done, true);
    });

    it('an already aborted signal ends it at once', async (t) => {
      const log = await fresh(t);
      await log.append(0, [rec('a', '1')]);
      const controller = new AbortController();
      controller.abort();
      assert.deepEqual(await collect(log.tail(0, 0n, { signal: controller.signal })), []);
    });
  });
}
