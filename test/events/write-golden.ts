/**
 * Writes the golden files: one encoded record of every event type at its current schema
 * version, to test/fixtures/golden/<Type>.v<N>.bin. Existing files are never overwritten:
 * they are the bytes released schemas wrote, and must stay readable as they are.
 *   node --import tsx test/events/write-golden.ts
 */
import { existsSync, writeFileSync } from 'node:fs';
import { encodeEvent } from '../../src/events/codec.ts';
import { GOLDEN_EVENTS } from './golden-events.ts';

export const GOLDEN_DIR = new URL('../fixtures/golden/', import.meta.url);

function main(): void {
  for (const [file, event] of Object.entries(GOLDEN_EVENTS)) {
    const path = new URL(file, GOLDEN_DIR);
    if (existsSync(path)) {
      console.log(`kept    ${file}`);
      continue;
    }
    writeFileSync(path, encodeEvent(event));
    console.log(`written ${file}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
