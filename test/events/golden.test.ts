// Golden bytes and schema drift: a released schema edited, or a codec change that alters
// the wire format, fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { RELEASED_SCHEMAS, decodeEvent, encodeEvent } from '../../src/events/codec.ts';
import { EVENT_TYPES } from '../../src/events/types.ts';
import { GOLDEN_EVENTS } from './golden-events.ts';
import { GOLDEN_COMMANDS } from './golden-commands.ts';
import { GOLDEN_COMMANDS_DIR, GOLDEN_DIR, GOLDEN_SNAPSHOTS_DIR } from './write-golden.ts';
import { decodeSnapshot, decodeSnapshotState, encodeSnapshot, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import { GOLDEN_ENVELOPE, GOLDEN_STATE } from './golden-snapshots.ts';
import { fingerprintHex, readFingerprints, releasedSchemaFiles } from './write-fingerprints.ts';
import { RELEASED_COMMAND_SCHEMAS, decodeCommand, encodeCommand } from '../../src/events/command-codec.ts';
import { COMMAND_TYPES } from '../../src/events/command-types.ts';

const goldenFiles = readdirSync(GOLDEN_DIR).filter((f) => f.endsWith('.bin'));
const currentVersion = new Map(RELEASED_SCHEMAS.map((s) => [s.eventType, s.version]));

test('every committed golden record decodes to its expected event', () => {
  assert.ok(goldenFiles.length > 0);
  for (const file of goldenFiles) {
    const expected = GOLDEN_EVENTS[file];
    assert.ok(expected, `${file} has no expected event in golden-events.ts`);
    assert.deepEqual(decodeEvent(readFileSync(new URL(file, GOLDEN_DIR))), expected, file);
  }
});

test('every event type has a golden record at its current schema version', () => {
  for (const type of EVENT_TYPES) {
    const file = `${type}.v${currentVersion.get(type)}.bin`;
    assert.ok(goldenFiles.includes(file), `missing ${file}: run node --import tsx test/events/write-golden.ts`);
  }
});

test('encoding the expected events at the current version reproduces the golden bytes', () => {
  for (const file of goldenFiles) {
    const event = GOLDEN_EVENTS[file]!;
    if (file !== `${event.type}.v${currentVersion.get(event.type)}.bin`) continue; // older writer version
    assert.deepEqual(encodeEvent(event), new Uint8Array(readFileSync(new URL(file, GOLDEN_DIR))), file);
  }
});

test('every command type has a golden record at its current version, which decodes to its expected command and is what encoding writes', () => {
  const files = readdirSync(GOLDEN_COMMANDS_DIR).filter((f) => f.endsWith('.bin'));
  const current = new Map(RELEASED_COMMAND_SCHEMAS.map((s) => [s.eventType, s.version]));
  for (const type of COMMAND_TYPES) assert.ok(files.includes(`${type}.v${current.get(type)}.bin`), `missing ${type}`);
  for (const file of files) {
    const expected = GOLDEN_COMMANDS[file];
    assert.ok(expected, `${file} has no expected command in golden-commands.ts`);
    const bytes = new Uint8Array(readFileSync(new URL(file, GOLDEN_COMMANDS_DIR)));
    assert.deepEqual(decodeCommand(bytes), expected, file);
    if (file === `${expected.type}.v${current.get(expected.type)}.bin`) assert.deepEqual(encodeCommand(expected), bytes, file);
  }
});

test('no released schema changed its fingerprint (schemas/fingerprints.json)', () => {
  const listed = readFingerprints();
  for (const schema of releasedSchemaFiles()) {
    const recorded = listed[schema.file];
    assert.ok(
      recorded,
      `${schema.file} is not in schemas/fingerprints.json: run node --import tsx test/events/write-fingerprints.ts to release it`,
    );
    assert.equal(fingerprintHex(schema.fingerprint), recorded, `${schema.file} was edited after release: add a new version instead`);
  }
  const present = new Set(releasedSchemaFiles().map((s) => s.file));
  for (const file of Object.keys(listed)) assert.ok(present.has(file), `released schema ${file} was deleted`);
});

/** Byte fields as hex, so a decoded Buffer and an expected Uint8Array compare by content. */
function plain(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

test('the golden snapshot records decode to their expected state and envelope, and are what encoding writes', () => {
  const state = new Uint8Array(readFileSync(new URL('PartitionState.v1.bin', GOLDEN_SNAPSHOTS_DIR)));
  const envelope = new Uint8Array(readFileSync(new URL('PartitionSnapshot.v1.bin', GOLDEN_SNAPSHOTS_DIR)));
  assert.deepEqual(plain(decodeSnapshotState(state)), plain(GOLDEN_STATE));
  const decoded = decodeSnapshot(envelope);
  assert.deepEqual(
    plain({ ...decoded, state: null, checksum: null }),
    plain({ format: 1, ...GOLDEN_ENVELOPE, state: null, checksum: null }),
  );
  assert.deepEqual(new Uint8Array(decoded.state), state);
  assert.deepEqual(encodeSnapshotState(GOLDEN_STATE), state);
  assert.deepEqual(new Uint8Array(encodeSnapshot({ ...GOLDEN_ENVELOPE, state })), envelope);
});
