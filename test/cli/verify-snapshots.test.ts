/**
 * runlog verify and the snapshots a file log keeps: a live writer's snapshots (a child
 * process snapshotting every few records) equal the replay up to the offset each covers; a
 * snapshot whose state says something the log does not is reported with the fields that
 * differ (exit 1); a damaged one is reported as ignored, with why (exit 1); one made stale by
 * a compaction is a note (exit 0). verify writes nothing.
 */
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { recordAnchor } from '../../src/log/record-anchor.ts';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { decodeSnapshot, decodeSnapshotState, encodeSnapshot, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { saveSnapshot } from '../../src/projector/snapshots.ts';
import { openRunQueue, openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { filesUnder } from '../log/file-damage.ts';
import { scratchDir } from '../support/cleanup.ts';
import { writeScenario } from './audit-scenario.ts';
import { runCli } from './run-cli.ts';
import { liveWriter } from './spawn-audit-writer.ts';

interface Verdict {
  name: string;
  nextOffset: number;
  verdict: string;
  reasons: string[];
}

interface Report {
  ok: boolean;
  partitions: { partition: number; snapshots: Verdict[] }[];
}

async function verifyJson(dir: string): Promise<{ code: number | null; report: Report }> {
  const run = await runCli(['verify', '--dir', dir, '--json']);
  return { code: run.code, report: JSON.parse(run.stdout) as Report };
}

/** The snapshot files of the log in `dir`, newest first within each partition. */
async function snapshotFiles(dir: string): Promise<string[]> {
  const root = join(dir, 'snapshots');
  const files: string[] = [];
  for (const part of (await readdir(root).catch(() => [])).sort())
    for (const file of (await readdir(join(root, part)))
      .filter((f) => f.endsWith('.snapshot'))
      .sort()
      .reverse())
      files.push(join(root, part, file));
  return files;
}

async function waitForSnapshot(dir: string): Promise<void> {
  for (let i = 0; i < 1_200 && (await snapshotFiles(dir)).length === 0; i++) await sleep(50);
  assert.ok((await snapshotFiles(dir)).length > 0, 'the writer took a snapshot within a minute');
}

/** A log of the audit scenario on 2 partitions, written and stopped (the stop takes a snapshot). */
async function stoppedLog(t: import('node:test').TestContext): Promise<string> {
  const dir = await scratchDir(t, 'runlog-verify-snapshots-');
  const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 2 });
  await writeScenario(queue);
  await queue.stop();
  return dir;
}

describe('runlog verify compares the snapshots with the replay', () => {
  it("a live writer's snapshots each equal the replay up to the offset they cover", async (t) => {
    const { dir, more, stop } = await liveWriter(t, 4);
    await waitForSnapshot(dir);
    for (let i = 0; i < 6; i++) await more();
    const live = await verifyJson(dir);
    assert.equal(live.code, 0, JSON.stringify(live.report));
    const verdicts = live.report.partitions.flatMap((p) => p.snapshots);
    assert.ok(verdicts.length > 0, 'the snapshots were compared');
    assert.deepEqual(
      verdicts.map((v) => v.verdict),
      verdicts.map(() => 'equal'),
    );
    await stop();
    const text = await runCli(['verify', '--dir', dir]);
    assert.equal(text.code, 0, text.stdout + text.stderr);
    assert.match(text.stdout, /^ {2}snapshot \S+\.snapshot \(below @\d+\): equals the replay up to it$/m);
  });

  it('a snapshot of a view opened by a catch-up, whose threads lie in another order than a replay makes them, is equal (exit 0)', async (t) => {
    const dir = await scratchDir(t, 'runlog-verify-thread-order-');
    const first = await openRunQueue({ log: { kind: 'file', dir }, snapshots: false });
    await first.submit({ tenant: 'acme', thread: 'A', agent: 'x', input: 'a1' });
    const taken = await first.take({ agents: ['x'], holder: 'h', ttlMs: 5_000 });
    await first.close(taken!.lease, { status: 'succeeded' }); // A is emptied
    await first.submit({ tenant: 'acme', thread: 'B', agent: 'x', input: 'b1' });
    await first.submit({ tenant: 'acme', thread: 'A', agent: 'x', input: 'a2' }); // and filled again, after B
    await first.stop();
    // Opened by a catch-up from zero (no snapshot yet): A kept its place before B. Its stop snapshots that view.
    const second = await openRunQueue({ log: { kind: 'file', dir } });
    await second.stop();
    assert.equal((await snapshotFiles(dir)).length, 1);
    const { code, report } = await verifyJson(dir);
    assert.equal(code, 0, JSON.stringify(report));
    assert.deepEqual(
      report.partitions.flatMap((p) => p.snapshots.map((v) => v.verdict)),
      ['equal'],
    );
  });

  it('a snapshot whose state the log does not give is reported field by field (exit 1); verify writes nothing', async (t) => {
    const dir = await stoppedLog(t);
    const [file] = await snapshotFiles(dir);
    const snapshot = decodeSnapshot(await readFile(file!));
    const state = decodeSnapshotState(snapshot.state);
    const enqueued = state.metrics.enqueued;
    state.metrics.enqueued += 1;
    const log = await openFileLog({ dir });
    const { logId, partition, nextOffset, takenAt } = snapshot;
    await log.snapshots!.save(
      partition,
      encodeSnapshot({ logId, partition, nextOffset, takenAt, state: encodeSnapshotState(state) }),
      nextOffset,
      await recordAnchor(log, partition, nextOffset - 1n), // the same name: it replaces the snapshot
    );
    await log.close();

    const before = await filesUnder(dir);
    const { code, report } = await verifyJson(dir);
    assert.equal(code, 1);
    assert.equal(report.ok, false);
    const verdict = report.partitions[partition]!.snapshots[0]!;
    assert.deepEqual(
      [verdict.name, verdict.nextOffset, verdict.verdict, verdict.reasons],
      [
        file,
        Number(nextOffset),
        'differs',
        [
          `metrics.enqueued: snapshot ${enqueued + 1}, replay ${enqueued}`,
          `restored metrics.enqueued: ${enqueued + 1}, replay ${enqueued}`,
        ],
      ],
    );
    const text = await runCli(['verify', '--dir', dir]);
    assert.equal(text.code, 1);
    assert.match(text.stdout, /: DIFFERS from the replay up to it:\n {4}metrics\.enqueued: snapshot \d+, replay \d+$/m);
    assert.match(text.stdout, /^NOT verified: see above$/m);
    assert.deepEqual(await filesUnder(dir), before);
  });

  it('a read-only file log lists and reads its snapshots, and refuses to save one', async (t) => {
    const dir = await stoppedLog(t);
    const [file] = await snapshotFiles(dir);
    const log = await openFileLog({ dir, readOnly: true });
    t.after(() => log.close());
    const listed = await log.snapshots!.list(1);
    assert.deepEqual(
      listed.map((s) => s.name),
      [file],
    );
    assert.deepEqual(await listed[0]!.read(), await readFile(file!));
    const before = await filesUnder(dir);
    await assert.rejects(
      log.snapshots!.save(1, new Uint8Array(8), 1n),
      (e) => isRunlogError(e, 'InvalidArgument') && /open read-only: saving a snapshot refused/.test(e.message),
    );
    await assert.rejects(log.snapshots!.list(2), (e) => isRunlogError(e, 'InvalidArgument') && /partition/.test(e.message));
    assert.deepEqual(await filesUnder(dir), before);
  });

  it('a damaged snapshot is reported as ignored, with why (exit 1)', async (t) => {
    const dir = await stoppedLog(t);
    const [file] = await snapshotFiles(dir);
    const bytes = await readFile(file!);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 40) ^ 0xff, bytes.length - 40); // inside the checksum
    await writeFile(file!, bytes);
    const { code, report } = await verifyJson(dir);
    assert.equal(code, 1);
    const verdict = report.partitions.flatMap((p) => p.snapshots).find((v) => v.name === file)!;
    assert.equal(verdict.verdict, 'ignored');
    assert.match(verdict.reasons[0]!, /checksum does not match/);
    const text = await runCli(['verify', '--dir', dir]);
    assert.match(text.stdout, /: IGNORED \(the queue would not use it\):\n {4}.*checksum does not match/);
  });

  it('a snapshot made stale by a compaction is a note (exit 0)', async (t) => {
    const clock = new FakeClock();
    const dir = await scratchDir(t, 'runlog-verify-snapshots-');
    const queue = await openRunQueueOnLog(await openFileLog({ dir }), { clock: clock.read, snapshots: false });
    for (let i = 0; i < 8; i++) {
      clock.advance(5);
      await queue.submit({ tenant: 'acme', thread: `t${i % 3}`, agent: 'build', input: `job ${i}` });
    }
    for (let i = 0; i < 4; i++) {
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1_000 }))!;
      await queue.startAttempt(taken.lease, `run-${i}`);
      await queue.close(taken.lease, { status: 'succeeded', result: 'done' });
    }
    await saveSnapshot(queue.log, queue.views()[0]!);
    clock.advance(1_000);
    // Two prunes, then a compaction: it drops the first prune's tombstones, which the snapshot did not see.
    assert.equal(await queue.prune(0, 2), 2);
    assert.ok((await queue.prune(0, 100)) > 0);
    await queue.log.compact(0);
    await queue.stop();

    const { code, report } = await verifyJson(dir);
    assert.equal(code, 0, JSON.stringify(report));
    const [verdict] = report.partitions[0]!.snapshots;
    assert.equal(verdict!.verdict, 'stale');
    assert.match(verdict!.reasons[0]!, /stale: a compaction ran up to offset \d+/);
    assert.match((await runCli(['verify', '--dir', dir])).stdout, /: stale, not used \(a note, not a problem\):\n {4}.*a compaction ran/);
  });

  it('a snapshot taken after a prune and a compaction: its counters, which a replay of the compacted log cannot count, are a note (exit 0)', async (t) => {
    // The hostile tester (2026-12-07): verify said DIFFERS, NOT verified, of a healthy log.
    const dir = await scratchDir(t, 'runlog-verify-snapshots-');
    const log = await openFileLog({ dir });
    const queue = await openRunQueueOnLog(log, { clock: new FakeClock().read });
    for (let i = 0; i < 10; i++) {
      const { entryId } = await queue.submit({ tenant: 'acme', thread: `t${i}`, agent: 'build', input: 'x' });
      if (i < 6) await queue.cancel('acme', entryId, 'no');
    }
    assert.equal(await queue.prune(0, 100), 6);
    await log.compact(0);
    await queue.submit({ tenant: 'acme', thread: 'after', agent: 'build', input: 'y' });
    await queue.stop(); // its snapshot, after the compaction: not stale

    const { code, report } = await verifyJson(dir);
    assert.equal(code, 0, JSON.stringify(report));
    const [verdict] = report.partitions[0]!.snapshots;
    assert.equal(verdict!.verdict, 'equal');
    assert.ok(
      verdict!.reasons.length > 0 && verdict!.reasons.every((reason) => /^note: (restored )?metrics\./.test(reason)),
      verdict!.reasons.join('\n'),
    );
    assert.ok(verdict!.reasons.some((reason) => /metrics\.enqueued: snapshot 11, replay 5 .*compacted away/.test(reason)));
  });
});
