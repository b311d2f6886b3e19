/**
 * The contract every EventLog backend passes. A backend's spec calls
 * `eventLogContract(name, open)`; `open` gives a fresh, empty log for each test
 * (it may register its own cleanup on the test context; the contract closes the log).
 *
 * Nothing here assumes a backend: offsets are asserted increasing, not dense (Kafka
 * leaves gaps), and compaction may be asynchronous (Kafka's cleaner), in which case only
 * what holds both before and after compaction is asserted.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import type { AppendRecord, EventLog, LogRecord } from '../../src/log/event-log.ts';

export interface ContractOptions {
  /** compact() has finished compacting when it resolves (memory, file); false for Kafka. */
  compactionIsSynchronous?: boolean;
}

export type OpenLog = (partitions: number, t: TestContext) => Promise<EventLog>;

const enc = new TextEncoder();
const dec = new TextDecoder();

export function rec(key: string, value: string | null): AppendRecord {
  return { key, value: value === null ? null : enc.encode(value) };
}

export function text(record: LogRecord): string | null {
  return record.value === null ? null : dec.decode(record.value);
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

export function assertIncreasing(offsets: readonly bigint[]): void {
  for (let i = 1; i < offsets.length; i++) {
    assert.ok(offsets[i]! > offsets[i - 1]!, `offsets not increasing at ${i}: ${offsets[i - 1]} then ${offsets[i]}`);
  }
}

const isInvalid = (error: unknown): boolean => isRunlogError(error, 'InvalidArgument');

/** key -> latest value (tombstones remove the key): what compaction must never change. */
function fold(records: readonly LogRecord[]): Map<string, string> {
  const view = new Map<string, string>();
  for (const r of records) {
    const value = text(r);
    if (value === null) view.delete(r.key);
    else view.set(r.key, value);
  }
  return view;
}

async function ends(log: EventLog): Promise<bigint[]> {
  return Promise.all(Array.from({ length: log.partitions }, (_, p) => log.endOffset(p)));
}

export function eventLogContract(name: string, open: OpenLog, options: ContractOptions = {}): void {
  const synchronousCompaction = options.compactionIsSynchronous ?? true;

  async function fresh(t: TestContext, partitions = 2): Promise<EventLog> {
    const log = await open(partitions, t);
    t.after(() => log.close());
    return log;
  }

  describe(`EventLog contract: ${name}`, () => {
    describe('append and read', () => {
      it('reads back appended records in order with the offsets append returned', async (t) => {
        const log = await fresh(t);
        const start = await log.endOffset(0);
        const first = await log.append(0, [rec('a', '1'), rec('b', '2')]);
        const second = await log.append(0, [rec('c', '3')]);
        const offsets = [...first, ...second];
        assert.equal(offsets.length, 3);
        assert.ok(offsets[0]! >= start);
        assertIncreasing(offsets);
        const records = await collect(log.read(0, start));
        assert.deepEqual(
          records.map((r) => r.offset),
          offsets,
        );
        assert.deepEqual(
          records.map((r) => [r.key, text(r)]),
          [
            ['a', '1'],
            ['b', '2'],
            ['c', '3'],
          ],
        );
        assert.ok(records.every((r) => r.value instanceof Uint8Array));
      });

      it('keeps binary values byte for byte, including empty ones', async (t) => {
        const log = await fresh(t);
        const bytes = Uint8Array.from({ length: 300 }, (_, i) => i % 256);
        const [a, b] = await log.append(0, [
          { key: 'bin', value: bytes },
          { key: 'empty', value: new Uint8Array(0) },
        ]);
        const records = await collect(log.read(0, a!));
        assert.deepEqual([...records[0]!.value!], [...bytes]);
        assert.equal(records[1]!.offset, b);
        assert.equal(records[1]!.value!.length, 0);
      });

      it('an empty batch is a no-op that resolves to no offsets', async (t) => {
        const log = await fresh(t);
        const before = await log.endOffset(0);
        assert.deepEqual(await log.append(0, []), []);
        assert.equal(await log.endOffset(0), before);
        assert.deepEqual(await collect(log.read(0, 0n)), []);
      });

      it('a batch is atomic: one bad record and nothing of it is written', async (t) => {
        const log = await fresh(t);
        const before = await log.endOffset(0);
        const bad = { key: 'b', value: 'not bytes' } as unknown as AppendRecord;
        await assert.rejects(log.append(0, [rec('a', '1'), bad, rec('c', '3')]), isInvalid);
        assert.equal(await log.endOffset(0), before);
        assert.deepEqual(await collect(log.read(0, 0n)), []);
      });

      it('reads from the middle, and from past the end', async (t) => {
        const log = await fresh(t);
        const offsets = await log.append(
          0,
          Array.from({ length: 10 }, (_, i) => rec(`k${i}`, `v${i}`)),
        );
        const middle = await collect(log.read(0, offsets[4]!));
        assert.deepEqual(
          middle.map((r) => r.key),
          ['k4', 'k5', 'k6', 'k7', 'k8', 'k9'],
        );
        assert.deepEqual(await collect(log.read(0, (await log.endOffset(0)) + 5n)), []);
      });

      it('read stops after maxRecords', async (t) => {
        const log = await fresh(t);
        const offsets = await log.append(
          0,
          Array.from({ length: 10 }, (_, i) => rec(`k${i}`, `v${i}`)),
        );
        const some = await collect(log.read(0, offsets[2]!, { maxRecords: 3 }));
        assert.deepEqual(
          some.map((r) => r.key),
          ['k2', 'k3', 'k4'],
        );
        assert.deepEqual(await collect(log.read(0, offsets[0]!, { maxRecords: 0 })), []);
      });

      it('read ends at the end offset of the time of the call', async (t) => {
        const log = await fresh(t);
        await log.append(0, [rec('a', '1'), rec('b', '2')]);
        const seen: string[] = [];
        for await (const record of log.read(0, 0n)) {
          seen.push(record.key);
          if (seen.length === 1) await log.append(0, [rec('late', 'x')]);
        }
        assert.deepEqual(seen, ['a', 'b']);
      });

      it('endOffset is past every appended record', async (t) => {
        const log = await fresh(t);
        const empty = await log.endOffset(0);
        const offsets = await log.append(0, [rec('a', '1'), rec('b', '2')]);
        const end = await log.endOffset(0);
        assert.ok(end > offsets[1]!);
        assert.ok(offsets[0]! >= empty);
        const [next] = await log.append(0, [rec('c', '3')]);
        assert.ok(next! >= end);
      });

      it('reads tombstones back as null values', async (t) => {
        const log = await fresh(t);
        await log.append(0, [rec('a', '1'), rec('a', null)]);
        const records = await collect(log.read(0, 0n));
        assert.deepEqual(
          records.map((r) => [r.key, r.value]),
          [
            ['a', records[0]!.value],
            ['a', null],
          ],
        );
        assert.equal(text(records[0]!), '1');
      });

      it('keeps partitions apart', async (t) => {
        const log = await fresh(t, 3);
        await log.append(0, [rec('p0', 'a')]);
        await log.append(2, [rec('p2', 'b'), rec('p2', 'c')]);
        assert.deepEqual((await collect(log.read(0, 0n))).map(text), ['a']);
        assert.deepEqual(await collect(log.read(1, 0n)), []);
        assert.deepEqual((await collect(log.read(2, 0n))).map(text), ['b', 'c']);
        await log.compact(2);
        assert.deepEqual((await collect(log.read(0, 0n))).map(text), ['a']);
      });
    });

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

    describe('compaction', () => {
      it('keeps the latest record per key at its offset and drops tombstones', async (t) => {
        const log = await fresh(t);
        const offsets = await log.append(0, [rec('a', 'a1'), rec('b', 'b1'), rec('a', 'a2'), rec('c', 'c1')]);
        const more = await log.append(0, [rec('b', null), rec('d', 'd1'), rec('c', 'c2')]);
        const before = await collect(log.read(0, 0n));
        const end = await log.endOffset(0);
        await log.compact(0);
        const after = await collect(log.read(0, 0n));
        assert.deepEqual(fold(after), fold(before));
        assert.equal(await log.endOffset(0), end);
        if (!synchronousCompaction) return;
        assert.deepEqual(
          after.map((r) => [r.offset, r.key, text(r)]),
          [
            [offsets[2], 'a', 'a2'],
            [more[1], 'd', 'd1'],
            [more[2], 'c', 'c2'],
          ],
        );
      });

      it('keeps the end offset when everything is compacted away; offsets are never reused', async (t) => {
        const log = await fresh(t);
        const offsets = await log.append(0, [rec('a', '1'), rec('b', '2'), rec('a', null), rec('b', null)]);
        const end = await log.endOffset(0);
        await log.compact(0);
        assert.equal(await log.endOffset(0), end);
        if (synchronousCompaction) assert.deepEqual(await collect(log.read(0, 0n)), []);
        const [next] = await log.append(0, [rec('c', '3')]);
        assert.ok(next! > offsets[3]!);
        const tailRead = await collect(log.read(0, next!));
        assert.deepEqual(
          tailRead.map((r) => [r.offset, r.key]),
          [[next, 'c']],
        );
      });

      it('reads from an offset compacted away start at the next kept record', async (t) => {
        const log = await fresh(t);
        const offsets = await log.append(0, [rec('a', '1'), rec('b', '2'), rec('a', '3'), rec('c', '4')]);
        await log.compact(0);
        const after = await collect(log.read(0, offsets[1]!));
        assert.deepEqual(fold(after).get('c'), '4');
        if (synchronousCompaction)
          assert.deepEqual(
            after.map((r) => r.key),
            ['b', 'a', 'c'],
          );
        const fromZero = await collect(log.read(0, offsets[0]!, { maxRecords: 1 }));
        if (synchronousCompaction) assert.equal(fromZero[0]!.offset, offsets[1]);
      });

      it('appends and reads keep working after compaction, repeatedly', async (t) => {
        const log = await fresh(t);
        for (let round = 0; round < 3; round++) {
          await log.append(0, [rec('x', `x${round}`), rec(`only${round}`, 'o')]);
          await log.compact(0);
        }
        const view = fold(await collect(log.read(0, 0n)));
        assert.deepEqual(Object.fromEntries(view), { x: 'x2', only0: 'o', only1: 'o', only2: 'o' });
      });
    });

    describe('invalid arguments', () => {
      const badPartitions: unknown[] = [-1, 2, 0.5, '0', Number.NaN, null];

      it('append refuses bad partitions and records and writes nothing', async (t) => {
        const log = await fresh(t);
        await log.append(0, [rec('seed', 's')]);
        const before = await ends(log);
        for (const p of badPartitions) await assert.rejects(log.append(p as number, [rec('a', '1')]), isInvalid, `partition ${String(p)}`);
        const badBatches: unknown[] = [
          null,
          'records',
          [null],
          [{ key: 1, value: null }],
          [{ key: '', value: null }],
          [{ key: 'k' }],
          [{ key: 'k', value: 'text' }],
          [{ key: 'k', value: [1, 2] }],
        ];
        for (const batch of badBatches) {
          await assert.rejects(log.append(0, batch as AppendRecord[]), isInvalid, `batch ${JSON.stringify(batch)}`);
        }
        assert.deepEqual(await ends(log), before);
        assert.deepEqual(
          (await collect(log.read(0, 0n))).map((r) => r.key),
          ['seed'],
        );
      });

      it('read, tail, endOffset and compact refuse bad arguments', async (t) => {
        const log = await fresh(t);
        const signal = new AbortController().signal;
        const drain = (make: () => AsyncIterable<LogRecord>) => async () => {
          await collect(make());
        };
        for (const p of badPartitions) {
          await assert.rejects(
            drain(() => log.read(p as number, 0n)),
            isInvalid,
          );
          await assert.rejects(
            drain(() => log.tail(p as number, 0n, { signal })),
            isInvalid,
          );
          await assert.rejects(async () => log.endOffset(p as number), isInvalid);
          await assert.rejects(async () => log.compact(p as number), isInvalid);
        }
        for (const offset of [0, -1n, '0', null] as unknown[]) {
          await assert.rejects(
            drain(() => log.read(0, offset as bigint)),
            isInvalid,
            `offset ${String(offset)}`,
          );
          await assert.rejects(
            drain(() => log.tail(0, offset as bigint, { signal })),
            isInvalid,
          );
        }
        for (const maxRecords of [-1, 1.5, '3'] as unknown[]) {
          await assert.rejects(
            drain(() => log.read(0, 0n, { maxRecords: maxRecords as number })),
            isInvalid,
          );
        }
        await assert.rejects(
          drain(() => log.tail(0, 0n, {} as { signal: AbortSignal })),
          isInvalid,
        );
      });

      it('names the offending value in the message', async (t) => {
        const log = await fresh(t);
        await assert.rejects(log.append(7, [rec('a', '1')]), (e: unknown) => isInvalid(e) && /7/.test((e as Error).message));
        await assert.rejects(
          log.append(0, [{ key: 42, value: null } as unknown as AppendRecord]),
          (e: unknown) => isInvalid(e) && /42/.test((e as Error).message),
        );
      });
    });
  });
}
