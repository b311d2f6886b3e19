/**
 * PostgreSQL (Debian's) as a cluster of its own in a temporary directory: initdb, then postgres
 * on a unix socket in that directory (no TCP), durable as shipped (fsync, synchronous_commit on).
 * PostgreSQL refuses to run as root: as root, the directory is given to the `postgres` user
 * Debian's package creates and both programs run as that user.
 */
import { execFileSync } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, succeeds } from './child.ts';
import type { Scope } from './scope.ts';

const DEBIAN_ROOT = '/usr/lib/postgresql';

/** The bin directory of the newest PostgreSQL Debian installed, or null. */
export function findPostgresBin(): string | null {
  if (!existsSync(DEBIAN_ROOT)) return null;
  const versions = readdirSync(DEBIAN_ROOT)
    .filter((v) => existsSync(join(DEBIAN_ROOT, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? null : join(DEBIAN_ROOT, versions[0], 'bin');
}

export interface Postgres {
  /** The directory of its unix socket (pg's `host`). */
  host: string;
  user: string;
}

/** Starts a fresh cluster, stopped and removed at `scope`'s close. */
export async function startPostgres(scope: Scope): Promise<Postgres> {
  const bin = findPostgresBin();
  if (bin === null) throw new Error(`no PostgreSQL under ${DEBIAN_ROOT} (apt-get install postgresql)`);
  // Its own temporary directory (not under the bench's, which only root may enter).
  const dir = await mkdtemp(join(tmpdir(), 'runlog-peers-pg-'));
  scope.defer(() => rm(dir, { recursive: true, force: true }));
  const owner = process.getuid?.() === 0 ? postgresUser() : undefined;
  if (owner !== undefined) await chown(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], {
    ...owner,
    stdio: 'ignore',
  });
  const args = ['-D', data, '-k', dir, '-c', 'listen_addresses=', '-c', 'max_connections=200'];
  const ready = (): Promise<boolean> => succeeds(join(bin, 'pg_isready'), ['-h', dir, '-U', 'postgres']);
  // SIGINT: PostgreSQL's fast shutdown.
  await startServer(join(bin, 'postgres'), args, { ...owner, logFile: join(dir, 'postgres.log'), stopSignal: 'SIGINT' }, ready, scope);
  return { host: dir, user: 'postgres' };
}

function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}
