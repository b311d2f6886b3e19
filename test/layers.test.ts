/**
 * Dependencies point one way: events <- log <- projections <- projector <- queue <- worker <- cluster <- wire
 * <- client, server <- cli (and src/index.ts on top). The client and the server are one layer
 * that must not import each other: both speak only the wire. Every relative import of src/ and projections/ (type-only and
 * dynamic ones too, as TypeScript's own pre-processor lists them) must name a file of its own
 * layer or of one below it. The files directly in src/ (errors, warnings, describe, ...) and any
 * folder of src/ not listed here are shared helpers beneath every layer: they import no layer.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Lowest first: a file may import its own layer and those before it. */
const LAYERS: readonly [layer: string, prefix: string][] = [
  ['events', 'src/events/'],
  ['log', 'src/log/'],
  ['projections', 'projections/'],
  ['projector', 'src/projector/'],
  ['queue', 'src/queue/'],
  ['worker', 'src/worker/'],
  ['cluster', 'src/cluster/'],
  ['wire', 'src/wire/'],
  ['client', 'src/client/'],
  ['server', 'src/server/'],
  ['cli', 'src/cli/'],
  ['index', 'src/index.ts'],
];

const SHARED = { layer: 'shared', rank: -1 };

function layerOf(path: string): { layer: string; rank: number } {
  const index = LAYERS.findIndex(([, prefix]) => path === prefix || path.startsWith(prefix));
  if (index === -1) return SHARED;
  const layer = LAYERS[index]![0];
  return { layer, rank: SIDE_BY_SIDE.has(layer) ? LAYERS.findIndex(([name]) => name === 'client') : index };
}

/** Layers of one rank that must not import each other. */
const SIDE_BY_SIDE: ReadonlySet<string> = new Set(['client', 'server']);

function crossesSideways(from: string, to: string): boolean {
  const [source, target] = [layerOf(from).layer, layerOf(to).layer];
  return source !== target && SIDE_BY_SIDE.has(source) && SIDE_BY_SIDE.has(target);
}

/** `from -> to` for each import of `imports` (repository paths) that runs up the layers. */
function importsUp(imports: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = [];
  for (const [from, targets] of imports) {
    const source = layerOf(from);
    for (const to of targets) {
      const target = layerOf(to);
      if (target.rank > source.rank || crossesSideways(from, to)) found.push(`${from} (${source.layer}) -> ${to} (${target.layer})`);
    }
  }
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module `source` names: static, type-only, side-effect, re-exports and import(). */
function specifiersOf(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map(({ fileName }) => fileName);
}

/** The repository paths that `file` imports relatively. */
function relativeImportsOf(file: string): string[] {
  return specifiersOf(readFileSync(join(root, file), 'utf8'))
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) =>
      relative(root, resolve(root, dirname(file), specifier))
        .split(sep)
        .join('/'),
    );
}

function repositoryImports(): Map<string, string[]> {
  const files = [...sourceFiles('src'), ...sourceFiles('projections')];
  return new Map(files.map((file) => [file, relativeImportsOf(file)]));
}

describe('layers', () => {
  it('finds every kind of import, and flags one that runs up', () => {
    const imports = new Map([
      ['projections/a.ts', ['src/events/types.ts', 'projections/b.ts']],
      ['projections/b.ts', ['src/queue/types.ts']],
      ['src/log/c.ts', ['src/worker/d.ts', 'src/errors.ts']],
      ['src/errors.ts', ['src/cli/e.ts']],
      ['src/cli/e.ts', ['src/index.ts', 'src/queue/f.ts', 'src/describe.ts', 'src/server/g.ts', 'src/client/h.ts']],
      ['src/wire/i.ts', ['src/queue/types.ts', 'src/server/types.ts']],
      ['src/server/g.ts', ['src/wire/i.ts', 'src/client/h.ts', 'src/server/j.ts']],
      ['src/client/h.ts', ['src/wire/i.ts', 'src/server/g.ts', 'src/worker/k.ts']],
    ]);
    assert.deepEqual(importsUp(imports), [
      'projections/b.ts (projections) -> src/queue/types.ts (queue)',
      'src/log/c.ts (log) -> src/worker/d.ts (worker)',
      'src/errors.ts (shared) -> src/cli/e.ts (cli)',
      'src/cli/e.ts (cli) -> src/index.ts (index)',
      'src/wire/i.ts (wire) -> src/server/types.ts (server)',
      'src/server/g.ts (server) -> src/client/h.ts (client)',
      'src/client/h.ts (client) -> src/server/g.ts (server)',
    ]);
    const source = [
      "import type { A } from './a.ts';",
      "import { type B, C } from '../b.ts';",
      "import './c.ts';",
      "export { D } from './d.ts';",
      "export type * from './e.ts';",
      "/* a comment */ const f = await import('./f.ts');",
    ].join('\n');
    assert.deepEqual(specifiersOf(source).sort(), ['../b.ts', './a.ts', './c.ts', './d.ts', './e.ts', './f.ts']);
  });

  it('no import in src/ or projections/ runs up the layers', () => {
    const imports = repositoryImports();
    assert.ok(imports.get('src/projector/replay.ts')?.includes('projections/partition-view.ts'), 'the scan reads imports');
    assert.deepEqual(importsUp(imports), []);
  });

  it('projections/ imports nothing from src/queue/ or above', () => {
    const above = /^src\/(queue|worker|wire|client|server|cli)\//;
    const found = [...repositoryImports()]
      .filter(([from]) => from.startsWith('projections/'))
      .flatMap(([from, targets]) => targets.filter((to) => above.test(to)).map((to) => `${from} -> ${to}`));
    assert.deepEqual(found, []);
  });
});
