/**
 * The process that holds a file log's writer lock for this process (src/log/file/lock.ts), found
 * and killed by tests to make a writer lose its lock (Fenced).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

/** Children of this process (Linux: /proc/<pid>/task/<pid>/children lists those the main thread spawned). */
function childPids(): number[] {
  const text = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(' ').map(Number);
}

function stateOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.charAt(stat.lastIndexOf(')') + 2);
  } catch {
    return null;
  }
}

/** The process holding the lock for this process: our child running lock.ts's holder script (named runlog-lock). */
export function lockHolder(): number {
  const holders = childPids().filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').includes('runlog-lock'));
  assert.equal(holders.length, 1, `one lock holder among this process's children, got ${holders.length}`);
  return holders[0]!;
}

/** Blocks, without yielding to the event loop, until `pid` has exited (a zombie Node has not reaped). */
export function awaitZombie(pid: number): void {
  while (stateOf(pid) !== 'Z') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
}
