#!/usr/bin/env node
// `npm run build` (and `prepack`): compiles src/ and projections/ to JavaScript and declarations in
// dist/ (tsconfig.build.json: tsc rewrites `./x.ts` imports to `./x.js` in the JavaScript, not in
// the declarations, so this does it there: TypeScript reads either, some editors and tools only
// `.js`), then copies schemas/ to dist/schemas/: src/events/schemas.ts finds the schemas at
// `../../schemas/` from its own file, the repository's schemas/ from src/events/ and
// dist/schemas/ from dist/src/events/; and the web console's static files (src/server/console/).
import { chmodSync, cpSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** `from './x.ts'`, `import('../y.ts')`: relative specifiers naming a TypeScript source. */
const TS_SPECIFIER = /(\bfrom\s+|\bimport\()(['"])(\.{1,2}\/[^'"]*)\.ts\2/g;

function rewriteDeclarations(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) rewriteDeclarations(path);
    else if (entry.name.endsWith('.d.ts')) writeFileSync(path, readFileSync(path, 'utf8').replace(TS_SPECIFIER, '$1$2$3.js$2'));
  }
}

rmSync(dist, { recursive: true, force: true });
const { status } = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (status !== 0) process.exit(status ?? 1);
rewriteDeclarations(dist);
cpSync(join(root, 'schemas'), join(dist, 'schemas'), { recursive: true });
// The web console's files are served as they are (src/server/console-files.ts finds them beside its own file).
cpSync(join(root, 'src', 'server', 'console'), join(dist, 'src', 'server', 'console'), { recursive: true });
chmodSync(join(dist, 'src', 'cli', 'runlog.js'), 0o755);
