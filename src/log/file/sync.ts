import { open } from 'node:fs/promises';

/** fsyncs a directory, making the creation, removal or renaming of its entries durable. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
