/**
 * The cluster client's map (src/client/cluster-map.ts): a node's GET /v1/cluster answer is
 * checked (a map that is none is LogUnavailable naming the node), its urls spelt one way; a
 * later map replaces it only if it is of the same group and partition count and no older,
 * unless no node answered the current generation for staleMs (the group started again).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClusterMap, clusterState, type ClusterState } from '../../src/client/cluster-map.ts';
import { isRunlogError } from '../../src/errors.ts';
import type { ClusterAnswer } from '../../src/wire/index.ts';

const A = 'http://10.0.0.1:7070';
const B = 'http://10.0.0.2:7070';

function answer(generation: number, owners: (string | null)[], extra: Partial<ClusterAnswer> = {}): ClusterAnswer {
  return {
    group: 'g',
    generation,
    partitions: owners.length,
    self: { node: 'a', url: A },
    members: [
      { node: 'a', url: A },
      { node: 'b', url: B },
    ],
    owners,
    ...extra,
  };
}

function state(generation: number, owners: (string | null)[], extra: Partial<ClusterAnswer> = {}): ClusterState {
  return clusterState(answer(generation, owners, extra), A);
}

describe("the cluster client's map", () => {
  it('reads an answer: urls spelt as URL.href, owners per partition, nodes and owners without repeats', () => {
    const read = state(3, [A, `${B}/`, null, A]);
    assert.deepEqual(read.owners, [`${A}/`, `${B}/`, null, `${A}/`]);
    const map = new ClusterMap(read, { clock: () => 0, staleMs: 1000 });
    assert.deepEqual(map.owners(), [`${A}/`, `${B}/`]);
    assert.deepEqual(map.nodes(), [`${A}/`, `${B}/`]);
    assert.equal(map.ownerOf(2), null);
    map.hint(2, `${B}/`);
    assert.equal(map.ownerOf(2), `${B}/`);
  });

  it('refuses an answer that is no map: LogUnavailable naming the node and what is wrong', () => {
    const bad: [unknown, RegExp][] = [
      [{ group: 'g' }, /cluster map/],
      [answer(1, [A, A], { partitions: 3 }), /2 owners for 3 partitions/],
      [answer(1, ['not a url']), /"not a url"/],
      [answer(1, ['ftp://10.0.0.1/']), /ftp:/],
      [answer(1, [A], { members: [{ node: 'x', url: 'nowhere' }] }), /"nowhere"/],
      ['<html>', /cluster map/],
    ];
    for (const [value, names] of bad) {
      assert.throws(
        () => clusterState(value, A),
        (error: unknown) => isRunlogError(error, 'LogUnavailable') && error.message.includes(A) && names.test(error.message),
        JSON.stringify(value),
      );
    }
  });

  it('takes a map of the same group no older; an older one only once its generation went unconfirmed for staleMs', () => {
    let now = 0;
    const map = new ClusterMap(state(5, [A, A]), { clock: () => now, staleMs: 1000 });
    assert.equal(map.accept(state(5, [A, B])), true, 'the same generation (a node finishing its moves)');
    assert.equal(map.ownerOf(1), `${B}/`);
    assert.equal(map.accept(state(6, [B, B])), true, 'a newer one');
    assert.equal(map.accept(state(4, [A, A])), false, 'an older one: a node that lags');
    assert.equal(map.accept(state(9, [A, A], { group: 'other' })), false, 'another group');
    assert.equal(map.accept(state(9, [A, A, A])), false, 'another partition count');
    assert.equal(map.generation, 6);
    now = 999;
    assert.equal(map.accept(state(1, [A, A])), false);
    now = 1000;
    assert.equal(map.accept(state(1, [A, A])), true, 'no node answered generation 6 for staleMs: the group started again');
    assert.equal(map.generation, 1);
    assert.equal(map.accept(state(2, [A, B])), true);
  });
});
