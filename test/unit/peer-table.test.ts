import assert from 'node:assert/strict';
import { test } from 'node:test';
import { median, peerTable, ratioOf, targetLines, type RoundFigures } from '../../bench/peers/table.ts';

test('median: the middle value, or the mean of the two middle ones; none is an error', () => {
  for (const [values, expected] of [
    [[5], 5],
    [[3, 1, 2], 2],
    [[4, 1, 3, 2], 2.5],
    [[10, 10, 1, 1000], 10],
  ] as const) {
    assert.equal(median(values), expected, `median of ${values.join(',')}`);
  }
  assert.throws(() => median([]), /no values/);
});

test('ratioOf: the median of the per-round ratios, not the ratio of the medians', () => {
  const ratio = ratioOf([200, 400, 100], [100, 100, 100]);
  assert.deepEqual(ratio, { median: 2, min: 1, max: 4 });
  // Round by round 1, 6 and 0.5: median 1, where the medians' ratio would be 200 ÷ 100 = 2.
  const skewed = ratioOf([100, 300, 200], [100, 50, 400]);
  assert.deepEqual(skewed, { median: 1, min: 0.5, max: 6 });
  assert.throws(() => ratioOf([1, 2], [1]), /2 runlog rounds against 1/);
});

const figures = (enqueue: number, drain: number, enqueueThenDrain: number, closedLoop: number): RoundFigures => ({
  enqueue,
  drain,
  enqueueThenDrain,
  closedLoop,
});

test('peerTable: medians per system, then runlog ÷ each peer with the range over rounds', () => {
  const table = peerTable(
    new Map([
      ['runlog', [figures(20_000, 8_000, 5_000, 6_000), figures(30_000, 9_000, 6_000, 7_000), figures(25_000, 10_000, 7_000, 5_000)]],
      ['peer', [figures(10_000, 4_000, 2_500, 1_000), figures(10_000, 3_000, 2_000, 1_000), figures(12_500, 5_000, 3_500, 1_000)]],
    ]),
  );
  assert.deepEqual(table.split('\n'), [
    '| system | enqueue jobs/s | drain jobs/s | enqueue then drain jobs/s | closed-loop lifecycles/s |',
    '| --- | --- | --- | --- | --- |',
    '| runlog | 25,000 | 9,000 | 6,000 | 6,000 |',
    '| peer | 10,000 | 4,000 | 2,500 | 1,000 |',
    '| runlog ÷ peer | 2.00 (2.00–3.00) | 2.00 (2.00–3.00) | 2.00 (2.00–3.00) | 6.00 (5.00–7.00) |',
  ]);
});

test('peerTable: one round prints the ratio alone; no systems is an error', () => {
  const table = peerTable(
    new Map([
      ['runlog', [figures(3, 3, 3, 3)]],
      ['a', [figures(2, 2, 2, 2)]],
      ['b', [figures(4, 4, 4, 4)]],
    ]),
  );
  assert.match(table, /^\| runlog ÷ a \| 1\.50 \| 1\.50 \| 1\.50 \| 1\.50 \|$/m);
  assert.match(table, /^\| runlog ÷ b \| 0\.75 \| 0\.75 \| 0\.75 \| 0\.75 \|$/m);
  assert.throws(() => peerTable(new Map()), /no systems/);
});

test('targetLines: runlog ÷ the named peer against the target, met or missed', () => {
  const rounds = new Map([
    ['runlog', [figures(1, 300, 150, 1), figures(1, 500, 190, 1)]],
    ['peer', [figures(1, 100, 100, 1), figures(1, 200, 100, 1)]],
  ]);
  assert.deepEqual(targetLines(rounds, 'peer', ['drain', 'enqueueThenDrain'], 2), [
    'target: runlog ÷ peer, drain jobs/s, >= 2: 2.75 (met)',
    'target: runlog ÷ peer, enqueue then drain jobs/s, >= 2: 1.70 (missed)',
  ]);
  assert.throws(() => targetLines(rounds, 'nobody', ['drain'], 2), /no figures of runlog and nobody/);
});
