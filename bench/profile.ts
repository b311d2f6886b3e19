/**
 * `--profile <dir>`: CPU-profiles only the timed phase of a benchmark (not the set-up)
 * through node:inspector, into <dir>/<name>.cpuprofile (open it in Chrome DevTools).
 */
import { Session } from 'node:inspector/promises';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

let profileDir: string | null = null;

export function profileInto(dir: string | undefined): void {
  profileDir = dir ?? null;
}

export async function profiled<T>(name: string, body: () => Promise<T>): Promise<T> {
  if (profileDir === null) return body();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  try {
    return await body();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    await mkdir(profileDir, { recursive: true });
    await writeFile(join(profileDir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}
