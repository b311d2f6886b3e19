/**
 * `runlog export --format avro` read by Apache Avro's own avro-tools (Java): `getschema`
 * finds the writer schema embedded in the file (every event type's record, as schemas/
 * holds them), and `tojson` decodes every event; an entry's events, turned from Avro's JSON
 * encoding into runlog's event JSON by the schema getschema printed (a union's branch
 * unwrapped, bytes from Avro's ISO-8859-1 text to base64), equal what `runlog history --json`
 * shows of it, field for field (history adds each event's partition and offset).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EVENT_TYPES } from '../../src/events/types.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { writeScenario } from '../cli/audit-scenario.ts';
import { runCli } from '../cli/run-cli.ts';
import { scratchDir } from '../support/cleanup.ts';
import { avroTools } from './avro-tools.ts';

type AvroType = string | AvroType[] | { type: string; name?: string; namespace?: string; fields?: AvroField[] };
interface AvroField {
  name: string;
  type: AvroType;
}
interface AvroRecord {
  type: 'record';
  name: string;
  namespace: string;
  fields: AvroField[];
}

function typeName(type: AvroType): string {
  return typeof type === 'string' ? type : Array.isArray(type) ? 'union' : type.type;
}

/** A field's value from Avro's JSON encoding to runlog's: a union's one branch unwrapped, bytes as base64. */
function fromAvroJson(type: AvroType, value: unknown): unknown {
  if (Array.isArray(type)) {
    if (value === null) return null;
    const [branch, inner] = Object.entries(value as Record<string, unknown>)[0]!;
    return fromAvroJson(
      type.find((t) => typeName(t) === branch)!,
      inner,
    );
  }
  return typeName(type) === 'bytes' ? Buffer.from(value as string, 'latin1').toString('base64') : value;
}

function toEventJson(records: Map<string, AvroRecord>, line: string): Record<string, unknown> {
  const [name, value] = Object.entries(JSON.parse(line) as Record<string, Record<string, unknown>>)[0]!;
  const schema = records.get(name)!;
  const event: Record<string, unknown> = { type: schema.name };
  for (const field of schema.fields) event[field.name] = fromAvroJson(field.type, value[field.name]);
  return event;
}

describe('runlog export read by Apache avro-tools', () => {
  it('getschema finds every event type; tojson of an entry equals runlog history --json', async (t) => {
    const dir = await scratchDir(t, 'runlog-avro-tools-');
    const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 2 });
    const scenario = await writeScenario(queue);
    await queue.stop();
    const out = await scratchDir(t, 'runlog-avro-tools-out-');
    const whole = join(out, 'all.avro');
    const exported = await runCli(['export', '--dir', dir, '--format', 'avro', '--out', whole]);
    assert.equal(exported.code, 0, exported.stderr);

    const schema = JSON.parse((await avroTools('getschema', whole)).stdout) as AvroRecord[];
    assert.deepEqual(
      schema.map((record) => `${record.namespace}.${record.name}`),
      EVENT_TYPES.map((type) => `runlog.events.${type}`),
    );
    const records = new Map(schema.map((record) => [`${record.namespace}.${record.name}`, record]));
    const all = (await avroTools('tojson', whole)).stdout.trim().split('\n');
    const jsonl = (await runCli(['export', '--dir', dir])).stdout.trim().split('\n');
    assert.equal(all.length, jsonl.length, 'every event of the log');

    for (const entryId of Object.values(scenario)) {
      const file = join(out, `${entryId}.avro`);
      assert.equal((await runCli(['export', '--dir', dir, '--entry', entryId, '--format', 'avro', '--out', file])).code, 0);
      const fromJava = (await avroTools('tojson', file)).stdout
        .trim()
        .split('\n')
        .map((line) => toEventJson(records, line));
      const history = await runCli(['history', entryId, '--dir', dir, '--json']);
      assert.equal(history.code, 0, history.stderr);
      const shown = history.stdout
        .trim()
        .split('\n')
        .map((line) => {
          const { partition: _p, offset: _o, ...event } = JSON.parse(line) as Record<string, unknown>;
          return event;
        });
      assert.ok(shown.length >= 2, `${entryId}: its events`);
      assert.deepEqual(fromJava, shown, `${entryId}: avro-tools' JSON equals history's`);
    }
  });
});
