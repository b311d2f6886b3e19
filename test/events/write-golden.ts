/**
 * Writes the golden files: one encoded record of every event type at its current schema
 * version, to test/fixtures/golden/<Type>.v<N>.bin, and of every command type, to
 * test/fixtures/golden/commands/<Type>.v<N>.bin, and a snapshot (state and envelope) to
 * test/fixtures/golden/snapshots/. Existing files are never overwritten:
 * they are the bytes released schemas wrote, and must stay readable as they are.
 *   node --import tsx test/events/write-golden.ts
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { encodeEvent } from '../../src/events/codec.ts';
import { encodeCommand } from '../../src/events/command-codec.ts';
import { GOLDEN_EVENTS } from './golden-events.ts';
import { GOLDEN_COMMANDS } from './golden-commands.ts';
import { encodeSnapshot, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import { GOLDEN_ENVELOPE, GOLDEN_STATE } from './golden-snapshots.ts';

export const GOLDEN_DIR = new URL('../fixtures/golden/', import.meta.url);
export const GOLDEN_COMMANDS_DIR = new URL('commands/', GOLDEN_DIR);
export const GOLDEN_SNAPSHOTS_DIR = new URL('snapshots/', GOLDEN_DIR);

function main(): void {
  for (const [file, event] of Object.entries(GOLDEN_EVENTS)) write(new URL(file, GOLDEN_DIR), () => encodeEvent(event));
  for (const [file, command] of Object.entries(GOLDEN_COMMANDS)) write(new URL(file, GOLDEN_COMMANDS_DIR), () => encodeCommand(command));
  write(new URL('PartitionState.v1.bin', GOLDEN_SNAPSHOTS_DIR), () => encodeSnapshotState(GOLDEN_STATE));
  write(new URL('PartitionSnapshot.v1.bin', GOLDEN_SNAPSHOTS_DIR), () =>
    encodeSnapshot({ ...GOLDEN_ENVELOPE, state: encodeSnapshotState(GOLDEN_STATE) }),
  );
}

function write(path: URL, encode: () => Uint8Array): void {
  if (existsSync(path)) {
    console.log(`kept    ${path.pathname}`);
    return;
  }
  mkdirSync(new URL('.', path), { recursive: true });
  writeFileSync(path, encode());
  console.log(`written ${path.pathname}`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
