/**
 * redis-server (Debian's) in a temporary directory: an append-only file with the given
 * `appendfsync`, no RDB snapshots, no TCP port (a unix socket in the directory).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startServer, succeeds } from './child.ts';
import type { Scope } from './scope.ts';

export type AppendFsync = 'everysec' | 'always';

/** Starts a redis-server in `dir` (stopped at `scope`'s close); answers its socket path. */
export async function startRedis(dir: string, appendfsync: AppendFsync, scope: Scope): Promise<string> {
  const socket = join(dir, 'redis.sock');
  const config = join(dir, 'redis.conf');
  await writeFile(
    config,
    [
      'port 0',
      `unixsocket ${socket}`,
      'unixsocketperm 700',
      `dir ${dir}`,
      'appendonly yes',
      `appendfsync ${appendfsync}`,
      'save ""',
      'maxmemory-policy noeviction', // BullMQ needs it (also Redis's default)
      'daemonize no',
    ].join('\n') + '\n',
  );
  const ping = (): Promise<boolean> => succeeds('redis-cli', ['-s', socket, 'ping'], 'PONG');
  await startServer('redis-server', [config], { logFile: join(dir, 'redis.log'), stopSignal: 'SIGTERM' }, ping, scope);
  return socket;
}
