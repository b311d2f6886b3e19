/**
 * A snapshot whose ticket index columns are damaged yet whose checksum matches (written so by a
 * bug: the checksum guards against bit rot, not against a wrong writer), on a real file log:
 * the queue must ignore it with RUNLOG_SNAPSHOT_IGNORED and open as a replay from zero would,
 * every closed ticket answering as before. Never serve from columns that say something else:
 * wrong lengths, a tenant, attempt or outcome out of range, seqs or close times out of order,
 * numbers that are not whole, rows pointing past what the snapshot covers, a column missing.
 */
import assert from 'node:assert/strict';
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { decodeSnapshot, decodeSnapshotState, encodeSnapshot, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import type { SnapshotColumn } from '../../src/events/snapshot-types.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { SNAPSHOT_IGNORED } from '../../src/projector/snapshots.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { Entry } from '../../src/queue/types.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

interface Written {
  dir: string;
  /** Every ticket's entry as the queue answered it before stopping. */
  entries: Entry[];
}

/** A partition of 24 closed tickets (3 tenants, half keyed, some retried) and 2 open ones; stopped, so it keeps a snapshot. */
async function written(t: TestContext): Promise<Written> {
  const dir = await scratchDir(t, 'runlog-damaged-columns-');
  const clock = new FakeClock();
  const queue = await openRunQueueOnLog(await openFileLog({ dir, partitions: 1, fsync: false }), { clock: clock.read });
  const tickets: { tenant: string; entryId: string }[] = [];
  for (let i = 0; i < 26; i++) {
    clock.advance(10);
    const tenant = `tenant-${i % 3}`;
    const key = i % 2 === 0 ? `key-${i}` : undefined;
    const { entryId } = await queue.submit({ tenant, thread: `t${i}`, agent: 'build', input: `input ${i}`, ...(key ? { key } : {}) });
    tickets.push({ tenant, entryId });
    if (i >= 24) continue;
    let taken = await queue.takeEntry(tenant, entryId, { holder: 'w', ttlMs: 60_000 });
    await queue.startAttempt(taken!.lease, `run-${i}-1`);
    if (i % 4 === 0) {
      await queue.yield(taken!.lease, { kind: 'retry', error: 'once more' });
      taken = await queue.takeEntry(tenant, entryId, { holder: 'w', ttlMs: 60_000 });
      await queue.startAttempt(taken!.lease, `run-${i}-2`);
    }
    await queue.close(taken!.lease, i % 5 === 0 ? { status: 'failed', error: 'no' } : { status: 'succeeded', result: `result ${i}` });
  }
  const entries = await Promise.all(tickets.map(({ tenant, entryId }) => queue.entry(tenant, entryId)));
  await queue.stop();
  return { dir, entries };
}

async function snapshotPath(dir: string): Promise<string> {
  const at = join(dir, 'snapshots', 'partition-0');
  const names = (await readdir(at)).filter((name) => name.endsWith('.snapshot'));
  assert.equal(names.length, 1, `one snapshot: ${names.join(', ')}`);
  return join(at, names[0]!);
}

type Columns = SnapshotColumn[];

/** The column `field`, as a typed array copy of its kind, changed by `change` and written back. */
function edit<T extends Float64Array | Uint32Array | Uint8Array>(columns: Columns, field: string, change: (values: T) => T | void): void {
  const column = columns.find((c) => c.name.startsWith(`${field}:`));
  assert.ok(column !== undefined, `a column ${field}: ${columns.map((c) => c.name).join(', ')}`);
  const kind = column.name.slice(field.length + 1);
  const Type = { f64: Float64Array, u32: Uint32Array, u8: Uint8Array }[kind as 'f64' | 'u32' | 'u8'];
  assert.ok(Type !== undefined, `column ${column.name} is of a kind this test edits`);
  const values = new Type(column.bytes.byteLength / Type.BYTES_PER_ELEMENT);
  new Uint8Array(values.buffer).set(column.bytes);
  const changed = change(values as T) ?? values;
  column.bytes = new Uint8Array(changed.buffer, changed.byteOffset, changed.byteLength);
}

const DAMAGES: Array<[string, (columns: Columns) => Columns | void, string?]> = [
  ['a column one row short', (c) => edit<Float64Array>(c, 'seq', (v) => v.slice(0, -1))],
  ['a column of a byte count no element size divides', (c) => void (c.find((x) => x.name.startsWith('seq:'))!.bytes = new Uint8Array(13))],
  ['a tenant id past the tenant table', (c) => edit<Uint32Array>(c, 'tenant', (v) => void (v[3] = 999))],
  ['an outcome that is none', (c) => edit<Uint8Array>(c, 'state', (v) => void (v[2] = 7))],
  ['attempt counts going down', (c) => edit<Uint32Array>(c, 'attemptsEnd', (v) => void (v[1] = 0))],
  ['attempt counts past the attempt rows', (c) => edit<Uint32Array>(c, 'attemptsEnd', (v) => void (v[v.length - 1] = 10_000))],
  ['two rows of one seq', (c) => edit<Float64Array>(c, 'seq', (v) => void (v[5] = v[4]!))],
  ['a seq that is not whole', (c) => edit<Float64Array>(c, 'seq', (v) => void (v[2] = 2.5))],
  ['a seq that is NaN', (c) => edit<Float64Array>(c, 'seq', (v) => void (v[2] = NaN))],
  ['close times going back', (c) => edit<Float64Array>(c, 'closedAt', (v) => void (v[6] = v[0]! - 1_000))],
  ['a close offset past what the snapshot covers', (c) => edit<Float64Array>(c, 'closeOffset', (v) => void (v[7] = 1e9))],
  ['a Submitted offset after its close', (c) => edit<Float64Array>(c, 'submittedOffset', (v) => void (v[8] = 1e9))],
  ['a negative attempt offset', (c) => edit<Float64Array>(c, 'attemptOffset', (v) => void (v[0] = -5))],
  ['the runHash column missing', (c) => c.filter((x) => !x.name.startsWith('runHash:'))],
];

describe('a snapshot whose ticket index columns are damaged but checksummed', () => {
  for (const [name, damage, todo] of DAMAGES) {
    it(`${name}: ignored with a warning; the queue opens as a replay would`, { todo }, async (t) => {
      const { dir: original, entries } = await written(t);
      const dir = await scratchDir(t, 'runlog-damaged-columns-case-');
      await cp(original, dir, { recursive: true });
      const path = await snapshotPath(dir);
      const snapshot = decodeSnapshot(await readFile(path));
      const state = decodeSnapshotState(snapshot.state);
      assert.ok(state.closedIndex.length > 0, 'the snapshot keeps the ticket index');
      state.closedIndex = damage(state.closedIndex) ?? state.closedIndex;
      const { logId, partition, nextOffset, takenAt } = snapshot;
      await writeFile(path, encodeSnapshot({ logId, partition, nextOffset, takenAt, state: encodeSnapshotState(state) }));

      const warnings: RunlogWarning[] = [];
      const queue = await openRunQueueOnLog(await openFileLog({ dir, fsync: false }), {
        clock: new FakeClock().read,
        onWarning: (w) => warnings.push(w),
      });
      onCleanup(t, () => queue.stop());
      const ignored = warnings.filter((w) => w.code === SNAPSHOT_IGNORED);
      assert.equal(ignored.length, 1, `the damaged snapshot was served from: ${JSON.stringify(warnings)}`);
      for (const before of entries) assert.deepEqual(await queue.entry(before.tenant, before.entryId), before, `entry ${before.entryId}`);
    });
  }
});
