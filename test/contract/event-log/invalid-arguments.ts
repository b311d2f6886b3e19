/** EventLog contract, invalid arguments: refused as InvalidArgument, naming the value, writing nothing. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../../src/errors.ts';
import type { AppendRecord, EventLog, LogRecord } from '../../../src/log/event-log.ts';
import { collect, rec } from '../log-records.ts';
import type { LogUnderTest } from './log-under-test.ts';

const isInvalid = (error: unknown): boolean => isRunlogError(error, 'InvalidArgument');

async function ends(log: EventLog): Promise<bigint[]> {
  return Promise.all(Array.from({ length: log.partitions }, (_, p) => log.endOffset(p)));
}

export function invalidArguments({ fresh }: LogUnderTest): void {
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
}
