/**
 * Undoing a failed open, so that it leaves the directory as it found it. An open that
 * was creating a log removes what it made (log.json, partition directories, first segments,
 * temporary files), and the directory itself if it made that (removeCreatedDirs).
 *
 * The entries present before the creation began are noted, under the lock; undo() removes,
 * still under the lock, every entry that was not, so nothing else can have made them.
 */
import { readdir, rm, rmdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';

export class OpenUndo {
  readonly #dir: string;
  readonly #before: ReadonlySet<string>;

  private constructor(dir: string, before: ReadonlySet<string>) {
    this.#dir = dir;
    this.#before = before;
  }

  /** Notes what `dir` holds now. */
  static async note(dir: string): Promise<OpenUndo> {
    return new OpenUndo(dir, new Set(await readdir(dir, { recursive: true })));
  }

  /** Removes every entry created since note(): the topmost new ones, with what they hold. */
  async undo(): Promise<void> {
    const created = new Set((await readdir(this.#dir, { recursive: true })).filter((path) => !this.#before.has(path)));
    const topmost = [...created].filter((path) => !created.has(dirname(path)));
    for (const path of topmost) await rm(join(this.#dir, path), { recursive: true, force: true });
  }
}

/**
 * Removes the directories mkdir created for `dir` (`firstCreated` is what mkdir answered:
 * the topmost one it made, or undefined), deepest first, each only if it is empty.
 */
export async function removeCreatedDirs(dir: string, firstCreated: string | undefined): Promise<void> {
  if (firstCreated === undefined) return;
  for (let path = dir; ; path = dirname(path)) {
    try {
      await rmdir(path);
    } catch {
      return; // not empty (someone else uses it now) or gone: leave it
    }
    if (relative(firstCreated, path) === '') return;
  }
}
