/**
 * Records the CRC-64-AVRO fingerprint of every schema in schemas/ that is not yet listed in
 * schemas/fingerprints.json: run it once when releasing a new schema version. Listed entries
 * are never changed; the drift test fails if a listed schema's fingerprint changes.
 *   node --import tsx test/events/write-fingerprints.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { SCHEMA_DIR, loadSchemaDir } from '../../src/events/schemas.ts';

export const FINGERPRINTS_FILE = new URL('fingerprints.json', SCHEMA_DIR);

export function fingerprintHex(fp: bigint): string {
  return `0x${fp.toString(16).padStart(16, '0')}`;
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
  for (const schema of loadSchemaDir()) {
    if (listed[schema.file] !== undefined) continue;
    listed[schema.file] = fingerprintHex(schema.fingerprint);
    console.log(`added ${schema.file} ${listed[schema.file]}`);
  }
  const sorted = Object.fromEntries(Object.entries(listed).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(FINGERPRINTS_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
