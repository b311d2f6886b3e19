import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { murmur2, partitionOf, threadKeyBytes, toPositive } from '../../src/log/partitioner.ts';

// kafkajs's own port of Kafka's murmur2 (the "default" partitioner, the Java-compatible one).
const require = createRequire(import.meta.url);
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2.js') as (key: Buffer) => number;

describe('partitioner', () => {
  it('matches values from Kafka UtilsTest', () => {
    assert.equal(murmur2(Buffer.from('21')), -973932308);
    assert.equal(murmur2(Buffer.from('foobar')), -790332482);
    assert.equal(murmur2(Buffer.from('a-little-bit-long-string')), -985981536);
    assert.equal(murmur2(Buffer.from('a-little-bit-longer-string')), -1486304829);
    assert.equal(murmur2(Buffer.from('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8')), -58897971);
    assert.equal(murmur2(Buffer.from([0x61, 0x62, 0x63])), 479470107);
  });

  it('agrees with kafkajs on arbitrary keys', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        assert.equal(murmur2(bytes), kafkajsMurmur2(Buffer.from(bytes)));
      }),
    );
  });

  it('chooses the partition from tenant and thread like Kafka default partitioner', () => {
    const expected = toPositive(kafkajsMurmur2(Buffer.from(threadKeyBytes('acme', 'order-7')))) % 12;
    assert.equal(partitionOf('acme', 'order-7', 12), expected);
  });
});
