/**
 * runProjection on the embedded file log (real files): from/until by offset and by time,
 * following the live tail until aborted, checkpoints beside the log that a restart resumes and
 * a rebuild starts over, checkpoints that are not resumed (another version, another log, a log
 * replaced), the released schema versions' records read through the codec, and a table of
 * malformed arguments (InvalidArgument, nothing written).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { encodeEvent } from '../../src/events/codec.ts';
import type { RunlogEvent } from '../../src/events/types.ts';
import { openLog, openLogReadOnly } from '../../src/log/open-log.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { defineProjection } from '../../projections/projection.ts';
import { runProjection } from '../../src/projector/run-projection.ts';
import { fileCheckpoints } from '../../src/projector/file-checkpoints.ts';
import { memoryCheckpoints } from '../../src/projector/checkpoint-store.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { GOLDEN_EVENTS } from '../events/golden-events.ts';
import { GOLDEN_DIR } from '../events/write-golden.ts';

/** Counts events by type, and remembers the entry ids it saw in order. */
const counts = (version = 1) =>
  defineProjection({
    name: 'counts',
    version,
    initial: () => ({ byType: new Map<string, number>(), entries: [] as string[] }),
    evolve(state, event) {
      state.byType.set(event.type, (state.byType.get(event.type) ?? 0) + 1);
      if (event.type === 'Submitted') state.entries.push(event.entryId);
      return state;
    },
  });

const submitted = (n: number, at: number, thread = 't'): RunlogEvent => ({
  type: 'Submitted',
  tenant: 'acme',
  thread,
  entryId: `0-${n}`,
  at,
  seq: n,
  agent: 'build',
  input: new Uint8Array([n]),
  key: null,
  strategy: 'enqueue',
  priority: 0,
  notBefore: null,
  deadline: null,
  maxAttempts: 3,
  metadata: {},
});

async function fileLog(t: TestContext, dir?: string): Promise<{ log: EventLog; dir: string }> {
  const where = dir ?? (await scratchDir(t, 'runlog-projector-'));
  const log = await openLog({ kind: 'file', dir: where, fsync: false }, 1);
  onCleanup(t, () => log.close());
  return { log, dir: where };
}

/** Appends Submitted 1..n on partition 0, stamped T + 1000·n. */
async function submitMany(log: EventLog, from: number, to: number): Promise<void> {
  for (let n = from; n <= to; n++) await log.append(0, [{ key: `e/0-${n}/s`, value: encodeEvent(submitted(n, T + 1_000 * n)) }]);
}

const T = 1_767_225_600_000;
const ids = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, i) => `0-${from + i}`);

describe('runProjection on the file log', () => {
  it('folds from and until an offset or a time', async (t) => {
    const { log } = await fileLog(t);
    await submitMany(log, 1, 10);
    assert.deepEqual((await runProjection(log, counts())).state.entries, ids(1, 10));
    assert.deepEqual((await runProjection(log, counts(), { from: { offset: 3n }, until: { offset: 7n } })).state.entries, ids(4, 7));
    assert.deepEqual((await runProjection(log, counts(), { from: { at: T + 2_500 }, until: { at: T + 6_000 } })).state.entries, ids(3, 6));
    const later = await runProjection(log, counts(), { from: { at: T + 60_000 } });
    assert.deepEqual([later.state.entries, later.position.get(0)], [[], 10n], 'from a time after every event: at the end');
    const capped = await runProjection(log, counts(), { until: { offset: 99n } });
    assert.deepEqual([capped.state.entries.length, capped.position.get(0), capped.caughtUp], [10, 10n, true]);
  });

  it('follows the live tail until aborted, checkpoints beside the log, resumes after a restart and starts over on rebuild', async (t) => {
    const { log, dir } = await fileLog(t);
    await submitMany(log, 1, 3);
    const checkpoints = await fileCheckpoints(dir);
    const stop = new AbortController();
    const seen: number[] = [];
    const following = runProjection(log, counts(), {
      checkpoints,
      follow: stop.signal,
      onUpdate: ({ state, caughtUp }) => {
        seen.push(state.entries.length);
        if (caughtUp && state.entries.length === 3) void submitMany(log, 4, 6);
        if (state.entries.length === 6) stop.abort();
      },
    });
    const followed = await following;
    assert.deepEqual([followed.state.entries, followed.position.get(0), followed.resumed], [ids(1, 6), 6n, false]);
    assert.ok(existsSync(join(dir, 'projections', 'counts.checkpoint')), readdirSync(dir).join(' '));

    await submitMany(log, 7, 8);
    const resumed = await runProjection(log, counts(), { checkpoints });
    assert.deepEqual([resumed.state.entries, resumed.folded, resumed.resumed], [ids(1, 8), 2, true]);

    const rebuilt = await runProjection(log, counts(), { checkpoints, rebuild: true, from: { offset: 5n } });
    assert.deepEqual([rebuilt.state.entries, rebuilt.resumed], [ids(6, 8), false]);
    assert.deepEqual((await runProjection(log, counts(), { checkpoints })).state.entries, ids(6, 8), 'the rebuild is the checkpoint now');
  });

  it('keeps up with a file log being written through fresh read-only snapshots, one checkpoint store across them', async (t) => {
    const { log, dir } = await fileLog(t);
    const checkpoints = memoryCheckpoints();
    const seen: string[][] = [];
    for (const [from, to] of [
      [1, 3],
      [4, 4],
      [5, 7],
    ] as const) {
      await submitMany(log, from, to);
      const snapshot = await openLogReadOnly({ kind: 'file', dir });
      try {
        const result = await runProjection(snapshot, counts(), { checkpoints });
        assert.equal(result.folded, to - from + 1, 'only what was appended since the last snapshot');
        seen.push(result.state.entries);
      } finally {
        await snapshot.close();
      }
    }
    assert.deepEqual(seen, [ids(1, 3), ids(1, 4), ids(1, 7)]);
    const snapshot = await openLogReadOnly({ kind: 'file', dir });
    onCleanup(t, () => snapshot.close());
    await assert.rejects(runProjection(snapshot, counts(), { follow: new AbortController().signal }), /read-only log/);
  });

  it('does not resume a checkpoint of another version, of another log, or past the log end', async (t) => {
    const { log, dir } = await fileLog(t);
    await submitMany(log, 1, 4);
    const warnings: RunlogWarning[] = [];
    const onWarning = (warning: RunlogWarning): void => void warnings.push(warning);
    await runProjection(log, counts(), { checkpoints: await fileCheckpoints(dir) });

    const bumped = await runProjection(log, counts(2), { checkpoints: await fileCheckpoints(dir), onWarning });
    assert.deepEqual([bumped.resumed, bumped.state.entries], [false, ids(1, 4)]);
    assert.match(warnings.at(-1)!.message, /version 1 \(this projection is version 2\)/);

    const other = await fileLog(t);
    await submitMany(other.log, 1, 2);
    await cp(join(dir, 'projections'), join(other.dir, 'projections'), { recursive: true });
    const foreign = await runProjection(other.log, counts(2), { checkpoints: await fileCheckpoints(other.dir), onWarning });
    assert.deepEqual([foreign.resumed, foreign.state.entries], [false, ids(1, 2)]);
    assert.match(warnings.at(-1)!.message, /another log/);

    const store = memoryCheckpoints();
    await runProjection(log, counts(), { checkpoints: store });
    const short = await fileLog(t);
    await submitMany(short.log, 1, 2);
    const cut = await runProjection(short.log, counts(), { checkpoints: store, onWarning });
    assert.deepEqual([cut.resumed, cut.state.entries], [false, ids(1, 2)]);
    assert.match(warnings.at(-1)!.message, /past the log's end \(2\)/);
    assert.deepEqual(
      warnings.map((w) => w.code),
      Array(3).fill('RUNLOG_CHECKPOINT_IGNORED'),
    );
  });

  it('does not resume a checkpoint over a log restored from an older copy and grown past it since', async (t) => {
    // Before: resumed without a warning, the records of the other history at offsets it had passed never folded (the third tester).
    const { log } = await fileLog(t);
    await submitMany(log, 1, 4);
    const store = memoryCheckpoints();
    await runProjection(log, counts(), { checkpoints: store });
    const same = await runProjection(log, counts(), { checkpoints: store });
    assert.equal(same.resumed, true, 'the same log: resumed');

    const restored = await fileLog(t);
    await submitMany(restored.log, 1, 2); // the older copy ...
    for (let n = 3; n <= 6; n++) {
      const record = { key: `e/0-${n}/s`, value: encodeEvent(submitted(n, T + 1_000 * n, 'since')) };
      await restored.log.append(0, [record]); // ... and what was written on it since
    }
    const warnings: RunlogWarning[] = [];
    const run = await runProjection(restored.log, counts(), { checkpoints: store, onWarning: (w) => void warnings.push(w) });
    assert.deepEqual([run.resumed, run.state.entries], [false, ids(1, 6)]);
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['RUNLOG_CHECKPOINT_IGNORED'],
    );
    assert.match(warnings[0]!.message, /the record at offset 3 of partition 0 is not the one it folded there/);
    const again = await runProjection(restored.log, counts(), { checkpoints: store });
    assert.equal(again.resumed, true, 'its own checkpoint since: resumed');
  });

  it('reads the records of every released schema version through the codec', async (t) => {
    const { log } = await fileLog(t);
    const files = Object.keys(GOLDEN_EVENTS).sort();
    for (const file of files) await log.append(0, [{ key: file, value: new Uint8Array(readFileSync(new URL(file, GOLDEN_DIR))) }]);
    const all = defineProjection({ name: 'all', initial: () => [] as RunlogEvent[], evolve: (events, event) => [...events, event] });
    assert.deepEqual(
      (await runProjection(log, all)).state,
      files.map((file) => GOLDEN_EVENTS[file]),
    );
    const only = defineProjection({
      name: 'only',
      initial: () => [] as string[],
      handles: ['Closed', 'Yielded'],
      evolve: (types, event) => [...types, event.type],
    });
    const closedOrYielded = files.map((file) => GOLDEN_EVENTS[file]!.type).filter((type) => type === 'Closed' || type === 'Yielded');
    assert.ok(closedOrYielded.length >= 3, 'Closed v1 and v2, and Yielded');
    assert.deepEqual((await runProjection(log, only)).state, closedOrYielded);
  });

  it('refuses malformed arguments with InvalidArgument, writing nothing', async (t) => {
    const { log, dir } = await fileLog(t);
    await submitMany(log, 1, 2);
    const checkpoints = await fileCheckpoints(dir);
    const p = counts();
    const rows: [string, () => Promise<unknown>, RegExp][] = [
      ['no log', () => runProjection(null as never, p), /log must be an opened EventLog/],
      ['a plain object', () => runProjection(log, { name: 'x', initial: () => 0, evolve: () => 0 } as never), /made by defineProjection/],
      ['options not an object', () => runProjection(log, p, 'fast' as never), /options/],
      ['an unknown option', () => runProjection(log, p, { form: { offset: 0n } } as never), /unknown option "form"/],
      ['from a number offset', () => runProjection(log, p, { from: { offset: 3 as never } }), /from.offset must be a bigint/],
      ['from a negative offset', () => runProjection(log, p, { from: { offset: -1n } }), /from.offset must be a non-negative bigint/],
      ['from with both', () => runProjection(log, p, { from: { offset: 0n, at: 5 } as never }), /from must be \{ offset \} or \{ at \}/],
      ['offsets of another length', () => runProjection(log, p, { until: { offset: [1n, 2n] } }), /one offset per partition run \(1\)/],
      [
        'until before from',
        () => runProjection(log, p, { from: { offset: 2n }, until: { offset: 1n } }),
        /until.offset \(1\) is before from.offset \(2\)/,
      ],
      ['a time as a Date', () => runProjection(log, p, { until: { at: new Date() as never } }), /until.at must be an integer/],
      ['a partition out of range', () => runProjection(log, p, { partitions: [1] }), /partitions\[0\] must be an integer from 0 to 0/],
      ['no partitions', () => runProjection(log, p, { partitions: [] }), /non-empty array/],
      ['a partition twice', () => runProjection(log, p, { partitions: [0, 0] }), /must not repeat/],
      ['an unknown order', () => runProjection(log, p, { order: 'offset' as never }), /order must be one of partition, time/],
      ['follow not a signal', () => runProjection(log, p, { follow: true as never }), /follow must be an AbortSignal/],
      ['checkpoints not a store', () => runProjection(log, p, { checkpoints: dir as never }), /checkpoints must be a CheckpointStore/],
      ['checkpointEvery 0', () => runProjection(log, p, { checkpointEvery: 0, checkpoints }), /checkpointEvery must be an integer from 1/],
      ['rebuild "yes"', () => runProjection(log, p, { rebuild: 'yes' as never, checkpoints }), /rebuild must be a boolean/],
      ['onUpdate not a function', () => runProjection(log, p, { onUpdate: {} as never }), /onUpdate must be a function/],
      ['checkpoints of no log', () => fileCheckpoints(join(dir, 'nowhere')), /holds no runlog file log/],
    ];
    for (const [what, call, message] of rows) {
      await assert.rejects(
        call,
        (error: unknown) => isRunlogError(error, 'InvalidArgument') && message.test((error as Error).message),
        what,
      );
    }
    assert.equal(existsSync(join(dir, 'projections')), false, 'no checkpoint was written');
    assert.equal(existsSync(join(dir, 'nowhere')), false);
  });

  it('defineProjection refuses malformed definitions with InvalidArgument', () => {
    const ok = { name: 'ok', initial: () => 0, evolve: (n: number) => n + 1 };
    const rows: [string, unknown, RegExp][] = [
      ['not an object', 'counts', /projection must be/],
      ['no name', { ...ok, name: undefined }, /projection name/],
      ['a name with a slash', { ...ok, name: 'a/b' }, /projection name/],
      ['a name starting with a dot', { ...ok, name: '.hidden' }, /projection name/],
      ['a name too long', { ...ok, name: 'x'.repeat(101) }, /projection name/],
      ['version 0', { ...ok, version: 0 }, /projection version/],
      ['initial a value', { ...ok, initial: 0 }, /projection initial must be a function/],
      ['no evolve', { ...ok, evolve: undefined }, /projection evolve must be a function/],
      ['handles an unknown type', { ...ok, handles: ['Submited'] }, /handles\[0\] must be one of/],
      ['handles not an array', { ...ok, handles: 'Closed' }, /projection handles must be an array/],
      ['tombstone not a function', { ...ok, tombstone: 1 }, /projection tombstone must be a function/],
      ['a stateCodec without decode', { ...ok, stateCodec: { encode: () => new Uint8Array() } }, /stateCodec.decode must be a function/],
      ['an unknown key', { ...ok, evolves: ok.evolve }, /unknown option "evolves"/],
    ];
    for (const [what, definition, message] of rows) {
      assert.throws(
        () => defineProjection(definition as never),
        (error: unknown) => isRunlogError(error, 'InvalidArgument') && message.test((error as Error).message),
        what,
      );
    }
  });
});
