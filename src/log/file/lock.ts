/**
 * The writer lock of a log directory: an exclusive flock(2) on the directory itself, held
 * for the life of the writer by a child process.
 *
 * Node 20 has no flock(2), so a small holder process takes it for us: `sh` opens the log
 * directory as descriptor 9, util-linux's flock(1) takes an exclusive non-blocking lock on
 * it (exit 75 if another process holds it), and the shell prints "locked", then reads our
 * stdin pipe (a builtin loop: nothing else to find on the PATH) until it closes. The kernel
 * drops a flock when the last descriptor of its open file is closed, i.e. when the holder
 * exits; and the holder exits when our end of the pipe closes, i.e. when this process
 * closes the log or dies, however it dies (SIGKILL included). Hence:
 *
 *   - two writers on one directory are impossible, whatever happens to the files in it:
 *     the lock is on the directory's inode, not on a file that can be deleted or replaced;
 *   - a writer that died never blocks the next one: its lock died with it.
 *
 * (A lock on a file, like the old hard-linked LOCK, is bypassed by deleting the file; a
 * writer epoch kept in a file and checked before each commit can be deleted or edited the
 * same way, and still needs a lock to hand epochs out. An OS lock on the directory needs
 * neither.)
 *
 * The holder runs in a session of its own, so a Ctrl-C meant for this process group does
 * not drop the lock under a writer that is shutting down in good order.
 *
 * `LOCK` holds the writer's pid for people and error messages only. It is never trusted:
 * a `LOCK` naming any pid, live or not, blocks nobody when no process holds the flock.
 *
 * If the holder dies while we write (someone killed it), nothing protects the directory
 * any more: the lock is lost for good and check() throws `Fenced` from then on. check()
 * runs before every group commit; it learns of the death from the holder's exit event and,
 * on Linux, from /proc even before Node has reaped the holder (see ProcessState).
 *
 * Guarantees: one host (flock is local), local Linux file systems. On NFS, Linux emulates
 * flock with NFS byte-range locks, which hold across clients only with a working lock
 * manager (NLM for v3, built into v4); on SMB/CIFS it depends on the server and mount
 * options. See the README.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { RunlogError } from '../../errors.ts';
import type { WarningListener } from '../../warnings.ts';

export interface DirLock {
  /** Throws `Fenced` once the lock is lost. Synchronous and cheap: runs before every group commit. */
  check(): void;
  /** Removes `LOCK` (if it is still ours) and drops the lock. Idempotent. */
  release(): Promise<void>;
}

type Holder = ChildProcessByStdio<Writable, Readable, Readable>;

const HOLDER_SCRIPT = 'exec 9<"$1" && flock -x -n -E 75 9 && echo locked && while read -r _; do :; done';
const EXIT_CONFLICT = 75;
const EXIT_NOT_FOUND = 127;

export async function acquireLock(dir: string, onWarning: WarningListener): Promise<DirLock> {
  const holder = await startHolderOnceFree(dir);
  const lock = new HeldLock(dir, holder);
  try {
    await lock.writeOwner(onWarning);
  } catch (error) {
    await lock.release();
    throw error;
  }
  return lock;
}

/**
 * How long an open waits for the lock of a writer that died: its holder exits once it reads the
 * end of its pipe, a moment after the writer's death (under load, tens of ms), and until then
 * the flock is still held. A supervisor restarting a killed writer at once met `Locked`.
 */
const DEAD_WRITER_GRACE_MS = 2_000;

/** startHolder; while LOCK names a process that is gone (its holder still exiting), it tries again, for DEAD_WRITER_GRACE_MS at most. */
async function startHolderOnceFree(dir: string): Promise<Holder> {
  const deadline = Date.now() + DEAD_WRITER_GRACE_MS;
  for (let pause = 10; ; pause = Math.min(2 * pause, 200)) {
    try {
      return await startHolder(dir);
    } catch (error) {
      const locked = error instanceof RunlogError && error.code === 'Locked';
      if (!locked || Date.now() + pause > deadline || (await namedWriterMayRun(dir))) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** False only when LOCK names a process that no longer exists (a pid LOCK does not name, or none: it may run). */
async function namedWriterMayRun(dir: string): Promise<boolean> {
  const pid = pidIn(await readFile(join(dir, 'LOCK'), 'utf8').catch(() => ''));
  if (pid === null) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Starts the holder; resolves once it holds the lock, rejects with `Locked` (or why it could not). */
function startHolder(dir: string): Promise<Holder> {
  return new Promise((resolve, reject) => {
    const holder = spawn('/bin/sh', ['-c', HOLDER_SCRIPT, 'runlog-lock', dir], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    holder.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    holder.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      if (stdout === 'locked\n') resolve(holder);
    });
    holder.on('error', (error) => reject(lockFailure(dir, `cannot start /bin/sh: ${error.message}`, error)));
    holder.on('close', (code) => {
      if (code === EXIT_CONFLICT) void lockedBy(dir).then(reject);
      else reject(holderFailure(dir, code, stderr));
    });
  });
}

class HeldLock implements DirLock {
  readonly #dir: string;
  readonly #holder: Holder;
  readonly #path: string;
  readonly #state: ProcessState;
  #mode: { kind: 'held' } | { kind: 'lost'; error: RunlogError } | { kind: 'released'; done: Promise<void> } = { kind: 'held' };

  constructor(dir: string, holder: Holder) {
    this.#dir = dir;
    this.#holder = holder;
    this.#path = join(dir, 'LOCK');
    this.#state = new ProcessState(holder.pid!);
    holder.on('exit', (code, signal) => this.#lose(code === null ? `killed by ${signal}` : `exited with code ${code}`));
    // The lock must not keep the process alive: an open log never did.
    for (const handle of [holder, holder.stdin, holder.stdout, holder.stderr]) unref(handle);
  }

  check(): void {
    if (this.#mode.kind === 'held' && (this.#holder.exitCode !== null || !this.#state.running())) this.#lose('exited');
    if (this.#mode.kind === 'lost') throw this.#mode.error;
  }

  /** Writes our pid to LOCK (for information), saying if it named another process. */
  async writeOwner(onWarning: WarningListener): Promise<void> {
    const previous = await ownerNamed(this.#path);
    if (previous !== null && previous !== `process ${process.pid}`) {
      const message = `${this.#path}: taking over a stale lock naming ${previous}, which did not hold the lock (a writer that stopped or died)`;
      onWarning({ code: 'RUNLOG_STALE_LOCK', message });
    }
    const draft = `${this.#path}.${process.pid}.tmp`;
    await writeFile(draft, `${process.pid}\n`);
    await rename(draft, this.#path);
  }

  release(): Promise<void> {
    if (this.#mode.kind !== 'released') this.#mode = { kind: 'released', done: this.#release(this.#mode.kind === 'held') };
    return this.#mode.done;
  }

  async #release(held: boolean): Promise<void> {
    this.#state.close();
    // Only while we hold the lock can LOCK not be another writer's by now.
    if (held && (await ownerNamed(this.#path)) === `process ${process.pid}`) await rm(this.#path, { force: true });
    if (this.#holder.exitCode !== null || this.#holder.signalCode !== null) return;
    this.#holder.ref(); // the caller awaits the release: keep the process alive until it is done
    const exited = new Promise((resolve) => this.#holder.once('exit', resolve));
    this.#holder.stdin.end();
    await exited;
  }

  #lose(how: string): void {
    if (this.#mode.kind !== 'held') return;
    const message = `${this.#dir}: this process lost the writer lock (its holder, process ${this.#holder.pid}, ${how}); it no longer writes this log: close it and open it again`;
    this.#mode = { kind: 'lost', error: new RunlogError('Fenced', message) };
  }
}

/**
 * Whether a child process (not yet reaped, so its pid is not reused) is still running, read
 * from /proc/<pid>/stat through a descriptor kept open: a pread costs ~15-20 µs on the test
 * VM (where any system call costs ~5 µs), against 2-5 ms for the datasync of a group commit;
 * reopening the file each time cost ~60-90 µs.
 * Without /proc (not Linux) it always says yes, and the holder's exit event alone tells.
 */
class ProcessState {
  #fd: number | null;
  readonly #buffer = Buffer.alloc(512);

  constructor(pid: number) {
    try {
      this.#fd = openSync(`/proc/${pid}/stat`, 'r');
    } catch {
      this.#fd = null;
    }
  }

  running(): boolean {
    if (this.#fd === null) return true;
    try {
      const text = this.#buffer.toString('latin1', 0, readSync(this.#fd, this.#buffer, 0, this.#buffer.length, 0));
      const state = text.charAt(text.lastIndexOf(')') + 2); // the field after "(command)"
      return state !== 'Z' && state !== 'X';
    } catch {
      return false; // ESRCH: reaped
    }
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}

/** Whom LOCK names ("process <pid>", or what it holds instead), or null if there is none. For messages only. */
async function ownerNamed(path: string): Promise<string | null> {
  try {
    const text = (await readFile(path, 'utf8')).trim();
    const pid = pidIn(text);
    return pid !== null ? `process ${pid}` : JSON.stringify(text.slice(0, 40));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** The pid a LOCK file's text names (what writeOwner writes), or null if it names none. */
function pidIn(text: string): number | null {
  const trimmed = text.trim();
  return /^\d{1,10}$/.test(trimmed) ? Number(trimmed) : null;
}

/** Stops a child process or one of its pipes (a net.Socket at runtime) from keeping the event loop alive. */
function unref(handle: object): void {
  (handle as { unref?: () => void }).unref?.();
}

async function lockedBy(dir: string): Promise<RunlogError> {
  const owner = await ownerNamed(join(dir, 'LOCK')).catch(() => null);
  const named = owner === null ? 'it wrote no LOCK file' : `its LOCK file names ${owner}`;
  return new RunlogError('Locked', `${dir} is locked by another process that has this log open (${named})`);
}

function holderFailure(dir: string, code: number | null, stderr: string): RunlogError {
  if (code === EXIT_NOT_FOUND) {
    return lockFailure(dir, `flock(1) was not found on the PATH (${stderr.trim()}): install util-linux, which provides it`);
  }
  return lockFailure(dir, stderr.trim() || `the lock holder exited with code ${code}`);
}

function lockFailure(dir: string, reason: string, cause?: unknown): RunlogError {
  return new RunlogError('LogUnavailable', `cannot lock the log directory ${dir}: ${reason}`, { cause, retriable: false });
}
