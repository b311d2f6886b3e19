/**
 * The Dockerfile's build stage, without Docker: the files its COPY instructions bring into the
 * build context are copied into an empty directory (with the repository's node_modules in place
 * of its `npm ci`), and its `npm pack` must build and pack there. A file the build needs that the
 * Dockerfile forgets to copy fails here, not in someone's `docker build`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cp, mkdir, symlink } from 'node:fs/promises';
import { basename, join, posix } from 'node:path';
import { it } from 'node:test';
import { scratchDir } from '../support/cleanup.ts';
import { childNpmEnv } from '../support/npm-env.ts';
import { dockerStages, root, type Instruction } from './dockerfile.ts';

/** `COPY src... dest` of the context (not --from another stage): [source, destination relative to WORKDIR]. */
function contextCopies(stage: readonly Instruction[]): [string, string][] {
  return stage
    .filter(({ keyword, args }) => keyword === 'COPY' && !args.startsWith('--'))
    .flatMap(({ args }) => {
      const parts = args.split(/\s+/);
      const dest = parts.pop()!;
      return parts.map((source): [string, string] => [source, dest.endsWith('/') ? posix.join(dest, basename(source)) : dest]);
    });
}

it('the build stage copies every file its npm pack needs', async (t) => {
  const [build] = await dockerStages();
  assert.ok(
    build!.some(({ keyword, args }) => keyword === 'RUN' && /\bnpm ci\b/.test(args)),
    'the build stage installs with npm ci',
  );
  assert.ok(
    build!.some(({ keyword, args }) => keyword === 'RUN' && /\bnpm pack\b/.test(args)),
    'and packs (prepack builds)',
  );
  const dir = await scratchDir(t, 'runlog-docker-build-');
  const context = join(dir, 'build');
  await mkdir(context);
  const copies = contextCopies(build!);
  assert.ok(copies.length > 0);
  for (const [source, dest] of copies) await cp(join(root, source), join(context, dest), { recursive: true });
  await symlink(join(root, 'node_modules'), join(context, 'node_modules'));

  const child = spawn('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: context,
    env: childNpmEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let [stdout, stderr] = ['', ''];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  assert.equal(code, 0, `npm pack in the build stage's files failed:\n${stderr}`);
  const [packed] = JSON.parse(stdout) as [{ files: { path: string }[] }];
  const files = packed.files.map((f) => f.path);
  for (const wanted of ['dist/src/cli/runlog.js', 'dist/src/index.d.ts', 'dist/schemas/Submitted.v1.avsc', 'LICENSE', 'README.md']) {
    assert.ok(files.includes(wanted), `the image's tarball has ${wanted}`);
  }
});
