/** Helpers for tests that damage a file log on disk. */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The segment files of a partition directory, in offset order. */
export async function segmentPaths(partitionDir: string): Promise<string[]> {
  return (await readdir(partitionDir))
    .filter((name) => name.endsWith('.log'))
    .sort()
    .map((name) => join(partitionDir, name));
}
