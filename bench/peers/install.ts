/**
 * Installs what `npm run bench:peers` needs before anything imports it: redis-server and
 * PostgreSQL from Debian's packages (apt-get, as root) if missing, then BullMQ and Graphile
 * Worker into bench/peers/node_modules from bench/peers/package-lock.json (never into runlog's
 * own dependencies).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { findPostgresBin } from './postgres-server.ts';

function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const missing = [...(onPath('redis-server') ? [] : ['redis-server']), ...(findPostgresBin() === null ? ['postgresql'] : [])];
if (missing.length > 0) {
  if (process.getuid?.() !== 0)
    throw new Error(`bench:peers needs ${missing.join(' and ')}: apt-get install -y ${missing.join(' ')} (as root)`);
  console.error(`installing ${missing.join(', ')} from Debian's packages…`);
  execFileSync('apt-get', ['update'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', ...missing], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}
execFileSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: fileURLToPath(new URL('.', import.meta.url)), stdio: 'inherit' });
