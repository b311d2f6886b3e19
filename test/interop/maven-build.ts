/**
 * The Java programs of test/interop/ (Maven project: pom.xml, src/main/java), built for the tests
 * that run them: `mvn -B -q package` (classes in target/classes, runtime jars in lib/) unless the
 * last successful build (its stamp, target/interop.built) is newer than pom.xml and src/, every
 * class named is there and lib/ holds the jars named. Builds are serialized
 * across processes with flock(1) (util-linux, which the file log's tests need anyway), so two test
 * files building at once do not write target/ together. A failed build fails the test with
 * Maven's output.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const INTEROP = join(ROOT, 'test', 'interop');
const BUILD_TIMEOUT_MS = 5 * 60_000;

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command from the repository root; never rejects (a spawn failure is code null, its message in stderr). */
export function run(command: string, args: string[], timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: ROOT, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      const why = error !== null && code === null ? `\n(${error.message})` : '';
      resolve({ code, stdout: String(stdout), stderr: String(stderr) + why });
    });
  });
}

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

const STAMP = join(INTEROP, 'target', 'interop.built');

function isBuilt(classFiles: string[], lib: string, jars: RegExp[]): boolean {
  if (!existsSync(STAMP) || !classFiles.every((f) => existsSync(f)) || !existsSync(lib)) return false;
  const files = readdirSync(lib);
  if (!jars.every((jar) => files.some((f) => jar.test(f)))) return false;
  return statSync(STAMP).mtimeMs >= Math.max(newestMtime(join(INTEROP, 'pom.xml')), newestMtime(join(INTEROP, 'src')));
}

/**
 * Builds test/interop unless `mainClasses` (e.g. runlog.interop.DecodeEvents) are built and
 * lib/ has a jar matching each of `jars`; answers the classpath for `java -cp`.
 */
export async function buildInterop(mainClasses: string[], jars: RegExp[]): Promise<string> {
  const classFiles = mainClasses.map((c) => join(INTEROP, 'target', 'classes', ...c.split('.')) + '.class');
  const lib = join(INTEROP, 'lib');
  if (!isBuilt(classFiles, lib, jars)) {
    mkdirSync(join(INTEROP, 'target'), { recursive: true });
    const lock = join(INTEROP, 'target', '.build.lock');
    const result = await run('flock', [lock, 'mvn', '-B', '-q', '-f', join(INTEROP, 'pom.xml'), 'package'], BUILD_TIMEOUT_MS);
    assert.equal(result.code, 0, `building test/interop with Maven failed (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
    writeFileSync(STAMP, `${new Date().toISOString()}\n`);
    assert.ok(isBuilt(classFiles, lib, jars), `Maven succeeded but a class of ${mainClasses.join(', ')} or a jar of lib/ is missing`);
  }
  return [join(INTEROP, 'target', 'classes'), join(lib, '*')].join(delimiter);
}
