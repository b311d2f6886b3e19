/**
 * Durability under SIGKILL: a child appends under load and prints what was acknowledged;
 * it is killed mid-flight; the reopened log must hold every acknowledged record, be
 * consistent (increasing, unique offsets; every record whole) and take new appends.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { collect, text } from '../contract/log-records.ts';
import { scratchDir } from '../support/cleanup.ts';

const writer = fileURLToPath(new URL('./crash-writer.ts', import.meta.url));
const ACKS_BEFORE_KILL = 2000;
const MAX_RUN_MS = 1500;

/** Runs the writer until ACKS_BEFORE_KILL acks (or MAX_RUN_MS), SIGKILLs it; returns the acks. */
async function runAndKill(dir: string, segmentBytes: number | undefined): Promise<Map<bigint, string>> {
  const child = spawn(process.execPath, ['--import', 'tsx', writer, dir, ...(segmentBytes ? [String(segmentBytes)] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit');
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const acks = new Map<bigint, string>();
  let timer: NodeJS.Timeout | undefined;
  const kill = (): void => {
    clearTimeout(timer);
    child.kill('SIGKILL');
  };
  for await (const line of createInterface({ input: child.stdout })) {
    if (line === 'ready') {
      timer = setTimeout(kill, MAX_RUN_MS);
      continue;
    }
    const [offset, key] = line.split(' ');
    acks.set(BigInt(offset!), key!);
    if (acks.size === ACKS_BEFORE_KILL) kill();
  }
  clearTimeout(timer);
  const [code, signal] = await exited;
  assert.equal(signal, 'SIGKILL', `writer ended by itself (code ${code}): ${stderr}`);
  return acks;
}

describe('file log crash safety', () => {
  for (const [name, segmentBytes] of [
    ['in one segment', undefined],
    ['rolling a segment every few appends', 2048],
  ] as const) {
    it(`keeps every acknowledged append across repeated SIGKILLs, ${name}`, async (t) => {
      const dir = await scratchDir(t, 'runlog-crash-');
      const acknowledged = new Map<bigint, string>();
      for (let round = 0; round < 4; round++) {
        const acks = await runAndKill(dir, segmentBytes);
        assert.ok(acks.size > 0, 'the writer acknowledged nothing');
        for (const [offset, key] of acks) acknowledged.set(offset, key);

        // A read-only open first: it reads what the repairing open keeps, and changes nothing.
        const reader = await openFileLog({ dir, readOnly: true, onWarning: () => {} });
        const seen = (await collect(reader.read(0, 0n))).map((r) => `${r.offset} ${r.key}`);
        await reader.close();
        const log = await openFileLog({ dir, partitions: 1, ...(segmentBytes ? { segmentBytes } : {}), onWarning: () => {} }); // takes over the dead writer's lock
        try {
          const records = await collect(log.read(0, 0n));
          assert.deepEqual(
            records.map((r) => `${r.offset} ${r.key}`),
            seen,
          );
          const byOffset = new Map(records.map((r) => [r.offset, r]));
          assert.equal(byOffset.size, records.length, 'an offset appears twice');
          records.forEach((r, i) => {
            assert.equal(r.offset, BigInt(i), 'offsets are dense and increasing');
            assert.equal(text(r), `value:${r.key}`);
          });
          for (const [offset, key] of acknowledged) assert.equal(byOffset.get(offset)?.key, key, `acknowledged ${offset} ${key}`);
          const end = await log.endOffset(0);
          assert.deepEqual(await log.append(0, [{ key: `check/${round}`, value: new TextEncoder().encode(`value:check/${round}`) }]), [
            end,
          ]);
        } finally {
          await log.close();
        }
      }
    });
  }
});
