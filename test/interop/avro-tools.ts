/**
 * Apache Avro's own command line tools (org.apache.avro:avro-tools, the self-contained jar
 * Apache publishes to Maven Central), fetched by Maven into test/interop/target/avro-tools/
 * (gitignored) on first use, serialized across processes with flock(1) as maven-build.ts
 * does. A failed fetch fails the test with Maven's output: never a silent skip.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { INTEROP, run, type Run } from './maven-build.ts';

export const AVRO_TOOLS_VERSION = '1.12.2';
const DIR = join(INTEROP, 'target', 'avro-tools');
const JAR = join(DIR, `avro-tools-${AVRO_TOOLS_VERSION}.jar`);
const FETCH_TIMEOUT_MS = 5 * 60_000;
const RUN_TIMEOUT_MS = 2 * 60_000;

export async function avroToolsJar(): Promise<string> {
  if (existsSync(JAR)) return JAR;
  mkdirSync(DIR, { recursive: true });
  const artifact = `-Dartifact=org.apache.avro:avro-tools:${AVRO_TOOLS_VERSION}`;
  const fetched = await run(
    'flock',
    [join(DIR, '.fetch.lock'), 'mvn', '-B', '-q', 'dependency:copy', artifact, `-DoutputDirectory=${DIR}`],
    FETCH_TIMEOUT_MS,
  );
  assert.equal(fetched.code, 0, `fetching avro-tools with Maven failed (exit ${fetched.code}):\n${fetched.stdout}\n${fetched.stderr}`);
  assert.ok(existsSync(JAR), `Maven succeeded but ${JAR} is missing`);
  return JAR;
}

/** `java -jar avro-tools.jar <tool> ...args`; fails the test unless it exits 0. */
export async function avroTools(tool: string, ...args: string[]): Promise<Run> {
  const result = await run('java', ['-jar', await avroToolsJar(), tool, ...args], RUN_TIMEOUT_MS);
  assert.equal(result.code, 0, `avro-tools ${tool} ${args.join(' ')} failed (exit ${result.code}):\n${result.stderr}`);
  return result;
}
