// Parsing Canonical Form and CRC-64-AVRO against the Avro project's shared test vectors
// (apache/avro share/test/data/schema-tests.txt, cross-checked there by the Java implementation).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsingCanonicalForm } from '../../src/events/canonical-form.ts';
import { RABIN_EMPTY, fingerprintBytesLE, rabinFingerprint64, rabinFingerprintOf, toSignedInt64 } from '../../src/events/rabin.ts';

/** [input schema, canonical form, fingerprint as Java's signed long (null: not given)]. */
const VECTORS: ReadonlyArray<readonly [string, string, string | null]> = [
  ['"null"', '"null"', '7195948357588979594'],
  ['{"type":"null"}', '"null"', null],
  ['"boolean"', '"boolean"', '-6970731678124411036'],
  ['{"type":"boolean"}', '"boolean"', null],
  ['"int"', '"int"', '8247732601305521295'],
  ['{"type":"int"}', '"int"', null],
  ['"long"', '"long"', '-3434872931120570953'],
  ['{"type":"long"}', '"long"', null],
  ['"float"', '"float"', '5583340709985441680'],
  ['{"type":"float"}', '"float"', null],
  ['"double"', '"double"', '-8181574048448539266'],
  ['{"type":"double"}', '"double"', null],
  ['"bytes"', '"bytes"', '5746618253357095269'],
  ['{"type":"bytes"}', '"bytes"', null],
  ['"string"', '"string"', '-8142146995180207161'],
  ['{"type":"string"}', '"string"', null],
  ['[  ]', '[]', '-1241056759729112623'],
  ['[ "int"  ]', '["int"]', '-5232228896498058493'],
  ['[ "int" , {"type":"boolean"} ]', '["int","boolean"]', '5392556393470105090'],
  ['{"fields":[], "type":"record", "name":"foo"}', '{"name":"foo","type":"record","fields":[]}', '-4824392279771201922'],
  [
    '{"fields":[], "type":"record", "name":"foo", "namespace":"x.y"}',
    '{"name":"x.y.foo","type":"record","fields":[]}',
    '5916914534497305771',
  ],
  [
    '{"fields":[], "type":"record", "name":"a.b.foo", "namespace":"x.y"}',
    '{"name":"a.b.foo","type":"record","fields":[]}',
    '-4616218487480524110',
  ],
  [
    '{"fields":[], "type":"record", "name":"foo", "doc":"Useful info"}',
    '{"name":"foo","type":"record","fields":[]}',
    '-4824392279771201922',
  ],
  [
    '{"fields":[], "type":"record", "name":"foo", "aliases":["foo","bar"]}',
    '{"name":"foo","type":"record","fields":[]}',
    '-4824392279771201922',
  ],
  [
    '{"fields":[], "type":"record", "name":"foo", "doc":"foo", "aliases":["foo","bar"]}',
    '{"name":"foo","type":"record","fields":[]}',
    '-4824392279771201922',
  ],
  [
    '{"fields":[{"type":{"type":"boolean"}, "name":"f1"}], "type":"record", "name":"foo"}',
    '{"name":"foo","type":"record","fields":[{"name":"f1","type":"boolean"}]}',
    '7843277075252814651',
  ],
  [
    '{ "fields":[{"type":"boolean", "aliases":[], "name":"f1", "default":"true"}, {"order":"descending","name":"f2","doc":"Hello","type":"int"}], "type":"record", "name":"foo" }',
    '{"name":"foo","type":"record","fields":[{"name":"f1","type":"boolean"},{"name":"f2","type":"int"}]}',
    '-4860222112080293046',
  ],
  ['{"type":"enum", "name":"foo", "symbols":["A1"]}', '{"name":"foo","type":"enum","symbols":["A1"]}', '-6342190197741309591'],
  [
    '{"namespace":"x.y.z", "type":"enum", "name":"foo", "doc":"foo bar", "symbols":["A1", "A2"]}',
    '{"name":"x.y.z.foo","type":"enum","symbols":["A1","A2"]}',
    '-4448647247586288245',
  ],
  ['{"name":"foo","type":"fixed","size":15}', '{"name":"foo","type":"fixed","size":15}', '1756455273707447556'],
  [
    '{"namespace":"x.y.z", "type":"fixed", "name":"foo", "doc":"foo bar", "size":32}',
    '{"name":"x.y.z.foo","type":"fixed","size":32}',
    '-3064184465700546786',
  ],
  ['{ "items":{"type":"null"}, "type":"array"}', '{"type":"array","items":"null"}', '-589620603366471059'],
  ['{ "values":"string", "type":"map"}', '{"type":"map","values":"string"}', '-8732877298790414990'],
  [
    '{"name":"PigValue","type":"record", "fields":[{"name":"value", "type":["null", "int", "long", "PigValue"]}]}',
    '{"name":"PigValue","type":"record","fields":[{"name":"value","type":["null","int","long","PigValue"]}]}',
    '-1759257747318642341',
  ],
];

test('canonical form and fingerprint match the Avro spec vectors', () => {
  for (const [input, canonical, fingerprint] of VECTORS) {
    const pcf = parsingCanonicalForm(JSON.parse(input));
    assert.equal(pcf, canonical, input);
    if (fingerprint !== null) assert.equal(toSignedInt64(rabinFingerprintOf(pcf)).toString(), fingerprint, input);
  }
});

test('fingerprint of no bytes is EMPTY', () => {
  assert.equal(rabinFingerprint64(new Uint8Array()), RABIN_EMPTY);
});

test('"int" gives the single-object header bytes other implementations document', () => {
  const fp = rabinFingerprintOf('"int"');
  assert.equal(fp, 0x7275d51a3f395c8fn);
  assert.deepEqual([...fingerprintBytesLE(fp)], [0x8f, 0x5c, 0x39, 0x3f, 0x1a, 0xd5, 0x75, 0x72]);
});

test('canonical form drops logical types and writes a named type once, then by name', () => {
  const schema = {
    type: 'record',
    name: 'R',
    namespace: 'n',
    doc: 'd',
    fields: [
      { name: 'at', type: { type: 'long', logicalType: 'timestamp-millis' } },
      { name: 'e1', type: { type: 'enum', name: 'E', symbols: ['a'] } },
      { name: 'e2', type: ['null', 'E'], default: null },
      { name: 'm', type: { type: 'map', values: { type: 'array', items: 'string' } } },
      { name: 'o', type: { type: 'enum', name: 'other.O', symbols: ['x'] } },
    ],
  };
  assert.equal(
    parsingCanonicalForm(schema),
    '{"name":"n.R","type":"record","fields":[{"name":"at","type":"long"},' +
      '{"name":"e1","type":{"name":"n.E","type":"enum","symbols":["a"]}},{"name":"e2","type":["null","n.E"]},' +
      '{"name":"m","type":{"type":"map","values":{"type":"array","items":"string"}}},' +
      '{"name":"o","type":{"name":"other.O","type":"enum","symbols":["x"]}}]}',
  );
});
