// A test's cleanups as a defer stack. node:test runs `t.after` hooks in the order they were
// registered, so a scratch directory registered for removal before the log opened in it was
// registered for closing is removed while the log is still open (its background reached record then
// races the removal: ENOTEMPTY). onCleanup runs a test's cleanups last-registered first: whatever is
// opened in a directory is closed before the directory is removed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What onCleanup needs of a test context: node:test's TestContext has it. */
export interface AfterHooks {
  after(fn: () => Promise<void>): void;
}

type Cleanup = () => unknown;

const stacks = new WeakMap<AfterHooks, Cleanup[]>();

/** Runs `fn` after the test, before every cleanup registered earlier through onCleanup. */
export function onCleanup(t: AfterHooks, fn: Cleanup): void {
  const stack = stacks.get(t);
  if (stack) {
    stack.push(fn);
    return;
  }
  const fresh = [fn];
  stacks.set(t, fresh);
  t.after(() => unwind(fresh));
}

/** Pops and awaits every cleanup (one registered meanwhile included); rethrows the first error after all ran. */
async function unwind(stack: Cleanup[]): Promise<void> {
  const errors: unknown[] = [];
  for (let fn = stack.pop(); fn; fn = stack.pop()) {
    try {
      await fn();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0) throw errors[0];
}

/** A fresh directory under the OS temp dir, removed after everything registered later through onCleanup. */
export async function scratchDir(t: AfterHooks, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  onCleanup(t, () => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Something that runs until its signal aborts: a Worker. */
export interface Runs {
  run(signal: AbortSignal): Promise<unknown>;
}

/** Starts `runner.run`; after the test, `beforeStop` (if any), then the run is aborted and awaited. */
export function runUntilCleanup(t: AfterHooks, runner: Runs, beforeStop: () => void = () => {}): void {
  const stop = new AbortController();
  const running = runner.run(stop.signal);
  onCleanup(t, async () => {
    beforeStop();
    stop.abort();
    await running;
  });
}
