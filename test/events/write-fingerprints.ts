/**
 * Records the CRC-64-AVRO fingerprint of every schema in schemas/ that is not yet listed in
 * schemas/fingerprints.json: run it once when releasing a new schema version. Listed entries
 * are never changed; the drift test fails if a listed schema's fingerprint changes.
 *   node --import tsx test/events/write-fingerprints.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { COMMAND_SCHEMAS, SCHEMA_DIR, loadSchemaDir, loadSchemaFamily } from '../../src/events/schemas.ts';
import { SNAPSHOT_SCHEMAS } from '../../src/events/snapshot-codec.ts';

export const FINGERPRINTS_FILE = new URL('fingerprints.json', SCHEMA_DIR);

export function fingerprintHex(fp: bigint): string {
  return `0x${fp.toString(16).padStart(16, '0')}`;
}

/** Every released schema as fingerprints.json names it: events by file name, commands as `commands/<file>`, snapshots as `snapshots/<file>`. */
export function releasedSchemaFiles(): Array<{ file: string; fingerprint: bigint }> {
  const events = loadSchemaDir().map((s) => ({ file: s.file, fingerprint: s.fingerprint }));
  const commands = loadSchemaFamily(COMMAND_SCHEMAS).map((s) => ({ file: `commands/${s.file}`, fingerprint: s.fingerprint }));
  const snapshots = loadSchemaFamily(SNAPSHOT_SCHEMAS).map((s) => ({ file: `snapshots/${s.file}`, fingerprint: s.fingerprint }));
  return [...events, ...commands, ...snapshots];
}

export function readFingerprints(): Record<string, string> {
  try {
    return JSON.parse(readFileSync(FINGERPRINTS_FILE, 'utf8')) as Record<string, string>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
}

function main(): void {
  const listed = readFingerprints();
  for (const schema of releasedSchemaFiles()) {
    if (listed[schema.file] !== undefined) continue;
    listed[schema.file] = fingerprintHex(schema.fingerprint);
    console.log(`added ${schema.file} ${listed[schema.file]}`);
  }
  const sorted = Object.fromEntries(Object.entries(listed).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(FINGERPRINTS_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
