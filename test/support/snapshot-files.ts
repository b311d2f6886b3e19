/** The snapshot files a file log keeps (src/log/file/snapshot-store.ts), for tests that damage or count them. */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The `.snapshot` files of partition `partition` of the file log in `dir`, oldest first (their names are the offsets they cover). */
export async function snapshotFiles(dir: string, partition = 0): Promise<string[]> {
  const at = join(dir, 'snapshots', `partition-${partition}`);
  return (await readdir(at))
    .filter((name) => name.endsWith('.snapshot'))
    .map((name) => join(at, name))
    .sort();
}
