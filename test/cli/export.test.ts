/**
 * runlog export: JSON Lines (to stdout or a file) and Avro object container files, read
 * back event for event against the log; filters and --from; an existing file is not
 * overwritten; nothing is written to the log; a failed export leaves no partial file.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readEventContainer } from '../../src/events/avro-container.ts';
import { decodeEvent } from '../../src/events/codec.ts';
import type { RunlogEvent } from '../../src/events/types.ts';
import { openLogReadOnly } from '../../src/log/open-log.ts';
import { openRunQueue, openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { SEGMENT_HEADER_BYTES } from '../../src/log/file/segment-header.ts';
import { filesUnder, segmentPaths } from '../log/file-damage.ts';
import { scratchDir } from '../support/cleanup.ts';
import { CLI, runCli } from './run-cli.ts';

async function logWithHistory(t: import('node:test').TestContext): Promise<string> {
  const dir = await scratchDir(t, 'runlog-export-');
  const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 2 });
  for (let i = 0; i < 6; i++) {
    await queue.submit({
      tenant: i % 2 ? 'acme' : 'globex',
      thread: `t${i}`,
      agent: 'mail',
      input: Buffer.from([i, 255]),
      metadata: { n: String(i) },
    });
  }
  const taken = (await queue.take({ agents: ['mail'], holder: 'w1', ttlMs: 60_000 }))!;
  await queue.startAttempt(taken.lease, 'run-1');
  await queue.close(taken.lease, { status: 'succeeded', result: 'ok' });
  await queue.stop();
  return dir;
}

/** Every event of the log, partition by partition, in offset order. */
async function eventsOf(dir: string): Promise<RunlogEvent[]> {
  const log = await openLogReadOnly({ kind: 'file', dir });
  const events: RunlogEvent[] = [];
  for (let p = 0; p < log.partitions; p++) for await (const r of log.read(p, 0n)) if (r.value) events.push(decodeEvent(r.value));
  await log.close();
  return events;
}

describe('runlog export', () => {
  it('a record that is no runlog event: Corrupt naming its partition and offset (export, find, history)', async (t) => {
    const dir = await scratchDir(t, 'runlog-export-alien-');
    const log = await openFileLog({ dir, fsync: false, partitions: 1 });
    await log.append(0, [{ key: 'alien', value: Buffer.from('RLG1 is not an event') }]);
    await log.close();
    for (const args of [['export'], ['find'], ['history', '0-1']]) {
      const run = await runCli([...args, '--dir', dir]);
      assert.equal(run.code, 1, args.join(' '));
      assert.match(run.stderr, /Corrupt: partition 0 @0: bad single-object marker 0x52 0x4c/, args.join(' '));
    }
  });

  it('to a reader that stops reading (| head -1): the command ends quietly, exit 0, nothing on stderr', async (t) => {
    const dir = await scratchDir(t, 'runlog-export-pipe-');
    const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 2 });
    // ~1 MB of JSON Lines: more than a pipe's buffer, so the export is still writing when its reader goes.
    await queue.submitBatch(
      Array.from({ length: 2000 }, (_, i) => ({ tenant: 'acme', thread: `t${i}`, agent: 'mail', input: 'x'.repeat(300) })),
    );
    await queue.stop();
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'export', '--dir', dir, '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [first] = (await once(child.stdout, 'data')) as [Buffer];
    child.stdout.destroy(); // as head does once it has its line
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.match(first.toString(), /^\{"type":/);
    assert.equal(stderr, '');
    assert.equal(code, 0);
  });

  it('--format avro: an Avro container file holding every event of the log, whole', async (t) => {
    const dir = await logWithHistory(t);
    const before = await filesUnder(dir);
    const out = join(await scratchDir(t, 'runlog-export-out-'), 'events.avro');
    const run = await runCli(['export', '--dir', dir, '--format', 'avro', '--out', out]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, '');
    const bytes = await readFile(out);
    assert.deepEqual([...bytes.subarray(0, 4)], [...Buffer.from('Obj\x01', 'latin1')]);
    const header = bytes.toString('latin1');
    assert.ok(
      header.includes('avro.schema') && header.includes('"name":"runlog.events.Submitted","type":"record"'),
      'the schema in the header',
    );
    assert.ok(header.includes('avro.codec\x0edeflate'), 'deflate blocks');
    const read: RunlogEvent[] = [];
    for await (const event of readEventContainer(out)) read.push(event);
    assert.deepEqual(read, await eventsOf(dir));
    assert.ok(read.some((event) => event.type === 'Closed'));
    assert.deepEqual(await filesUnder(dir), before);

    const again = await runCli(['export', '--dir', dir, '--format', 'avro', '--out', out]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /--out ".*" exists already \(export never overwrites a file\)/);
    const written = await readFile(out);
    // A directory, a missing directory, a file as a directory: each a usage error naming --out, nothing created.
    for (const [bad, why] of [
      [dir, /exists already|is a directory/],
      [join(dir, 'no-such-dir', 'x.jsonl'), /lies in a directory that does not exist/],
      [join(out, 'x.jsonl'), /lies under a file, not a directory/],
    ] as const) {
      const refused = await runCli(['export', '--dir', dir, '--out', bad]);
      assert.equal(refused.code, 2, bad);
      assert.match(refused.stderr, new RegExp(`--out ${JSON.stringify(bad).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} `));
      assert.match(refused.stderr, why);
    }
    assert.deepEqual(await readFile(out), written, 'the existing file untouched');
  });

  it('a progress bar with an ETA on a terminal, ending at 100% of the records; nothing on stderr elsewhere', async (t) => {
    const dir = await logWithHistory(t);
    const records = (await eventsOf(dir)).length;
    const outDir = await scratchDir(t, 'runlog-export-out-');
    for (const [format, name] of [
      ['jsonl', 'events.jsonl'],
      ['avro', 'events.avro'],
    ] as const) {
      const shown = await runCli(['export', '--dir', dir, '--format', format, '--out', join(outDir, name)], { stderrIsTerminal: true });
      assert.equal(shown.code, 0, shown.stderr);
      const frames = shown.stderr.split('\r').filter((frame) => frame !== '');
      assert.ok(frames.length >= 1, shown.stderr);
      for (const frame of frames)
        assert.match(frame, new RegExp(`^\\[[#.]{30}\\] +\\d+%  \\d+/${records} records  (ETA .+|done in .+\\n)$`));
      assert.match(frames.at(-1)!, new RegExp(`^\\[#{30}\\] 100%  ${records}/${records} records  done in \\d`));
      assert.ok(shown.stderr.endsWith('\n'));
    }
    const piped = await runCli(['export', '--dir', dir, '--out', join(outDir, 'quiet.jsonl')]);
    assert.equal(piped.code, 0);
    assert.equal(piped.stderr, '', 'quiet when stderr is no terminal');
    const toStdout = await runCli(['export', '--dir', dir], { stderrIsTerminal: true });
    assert.equal(toStdout.stdout.trim().split('\n').length, records, 'the bar goes to stderr, the events to stdout');
    assert.match(toStdout.stderr, /100%/);
  });

  it('JSON Lines to a file, filtered, from a position', async (t) => {
    const dir = await logWithHistory(t);
    const outDir = await scratchDir(t, 'runlog-export-out-');
    const all = await eventsOf(dir);
    const acme = join(outDir, 'acme.jsonl');
    assert.equal((await runCli(['export', '--dir', dir, '--tenant', 'acme', '--out', acme])).code, 0);
    const lines = (await readFile(acme, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { tenant: string; input?: string });
    assert.equal(lines.length, all.filter((e) => e.tenant === 'acme').length);
    assert.ok(lines.every((event) => event.tenant === 'acme'));

    const whole = (await runCli(['export', '--dir', dir])).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { partition: number; offset: number });
    const k = 4;
    const position = [0, 1].map((p) => {
      const seen = whole.slice(0, k).filter((e) => e.partition === p);
      return seen.length === 0 ? 0 : seen.at(-1)!.offset + 1;
    });
    const rest = (await runCli(['export', '--dir', dir, '--from', position.join(',')])).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(rest, whole.slice(k));

    const taken = join(outDir, 'taken.jsonl');
    await writeFile(taken, 'keep me');
    const refused = await runCli(['export', '--dir', dir, '--out', taken]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /exists already/);
    assert.equal(await readFile(taken, 'utf8'), 'keep me');
  });

  it('a write that fails (past the file size limit: EFBIG) exits 1 naming it, no partial file left, no stack', async (t) => {
    const dir = await bigLog(t);
    const outDir = await scratchDir(t, 'runlog-export-out-');
    const out = join(outDir, 'events.jsonl');
    // Before: an unhandled 'error' event (a stack trace) and 20 KB of cut-off lines left as the export.
    const command = `ulimit -f 1; exec "${process.execPath}" --import tsx "${CLI}" export --dir "${dir}" --out "${out}"`;
    const run = await childRun(spawn('sh', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] })).read();
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stderr.trim(), 'runlog: EFBIG: file too large, write');
    assert.deepEqual([...(await filesUnder(outDir)).keys()], [], 'no partial export left');
  });

  it('SIGTERM stops an export (exit 1, saying so) and any other command at once (130); before, both ran on to their end', async (t) => {
    const dir = await bigLog(t);
    for (const [args, code, says] of [
      [['export', '--dir', dir], 1, /^runlog: Stopped: export stopped by a signal before the log's end\n$/],
      [['find', '--dir', dir], 130, /^$/],
    ] as const) {
      const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      const running = childRun(child);
      await running.firstOutput();
      // Its reader stops reading: the command waits on a full pipe, then hears the signal, then may write on.
      child.stdout.pause();
      await new Promise((resolve) => setTimeout(resolve, 200));
      child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 200));
      const run = await running.read();
      assert.equal(run.code, code, `${args[0]}: ${run.stderr}`);
      assert.match(run.stderr, says);
    }
  });

  it('a log damaged in a sealed segment (met when read, not at open): Corrupt naming it, and no partial file left', async (t) => {
    const dir = await scratchDir(t, 'runlog-export-damaged-');
    const log = await openFileLog({ dir, partitions: 1, segmentBytes: 2048, onWarning: () => {} });
    const queue = await openRunQueueOnLog(log);
    for (let i = 0; i < 30; i++) await queue.submit({ tenant: 'acme', thread: `t${i}`, agent: 'a', input: `input ${i}` });
    await queue.stop();
    await log.close();
    const segments = await segmentPaths(join(dir, 'partition-0'));
    assert.ok(segments.length >= 3, `several segments (${segments.length})`);
    const bytes = await readFile(segments[1]!);
    bytes[SEGMENT_HEADER_BYTES + 30] = bytes[SEGMENT_HEADER_BYTES + 30]! ^ 0xff; // inside its first frame
    await writeFile(segments[1]!, bytes);
    const outDir = await scratchDir(t, 'runlog-export-out-');
    for (const format of ['jsonl', 'avro']) {
      const out = join(outDir, `events.${format}`);
      const run = await runCli(['export', '--dir', dir, '--format', format, '--out', out]);
      assert.equal(run.code, 1, run.stderr);
      assert.ok(run.stderr.includes(`Corrupt: ${segments[1]!}: bad frame at byte ${SEGMENT_HEADER_BYTES}`), run.stderr);
      assert.deepEqual([...(await filesUnder(outDir)).keys()], [], `--format ${format}: a partial export was left as if whole`);
    }
  });
});

/** ~1 MB of JSON Lines, more than a pipe's buffer, in segments of 4 KiB (reading them goes to the disk on the way). */
async function bigLog(t: import('node:test').TestContext): Promise<string> {
  const dir = await scratchDir(t, 'runlog-export-big-');
  const log = await openFileLog({ dir, partitions: 2, segmentBytes: 4096 });
  const queue = await openRunQueueOnLog(log, { snapshots: false });
  await queue.submitBatch(
    Array.from({ length: 4000 }, (_, i) => ({ tenant: 'acme', thread: `t${i}`, agent: 'mail', input: 'x'.repeat(100) })),
  );
  await queue.stop();
  return dir;
}

/** A child's exit code and stderr, heard from its start; its stdout read on once `read()` resumes it. */
function childRun(
  child: import('node:child_process').ChildProcessByStdio<null, import('node:stream').Readable, import('node:stream').Readable>,
) {
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'close') as Promise<[number | null]>;
  return {
    firstOutput: () => once(child.stdout, 'data'),
    read: async () => {
      child.stdout.resume();
      const [code] = await exited;
      return { code, stderr };
    },
  };
}
