/** The one describer of bad values: every kind of value reads as what it is, and nothing it is given can make it throw or run caller code. */
import assert from 'node:assert/strict';
import { describe as suite, it } from 'node:test';
import { describe } from '../../src/describe.ts';

class Order {
  amount = 42;
}

suite('describe', () => {
  it('shows each kind of value as what it is', () => {
    const { proxy: revoked, revoke } = Proxy.revocable({}, {});
    revoke();
    const circular: Record<string, unknown> = { a: 1 };
    circular.self = circular;
    const cases: [unknown, string][] = [
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      [Number.NEGATIVE_INFINITY, '-Infinity'],
      [-0, '-0'],
      [1.5, '1.5'],
      [10n, '10n'],
      [Symbol('s'), 'Symbol(s)'],
      ['x', '"x"'],
      ['lone \ud800', '"lone \\ud800"'],
      [undefined, 'undefined'],
      [null, 'null'],
      [() => 1, '[Function (anonymous)]'],
      [new Map([['k', 1]]), "Map(1) { 'k' => 1 }"],
      [new Date(0), 'Date(1970-01-01T00:00:00.000Z)'],
      [new Date(Number.NaN), 'Date(Invalid Date)'],
      [new Order(), 'Order { amount: 42 }'],
      [new Uint8Array(3), 'Uint8Array(3 bytes)'],
      [new Error('boom\nmore'), 'Error: boom'],
      [
        Object.defineProperty({}, 'x', {
          enumerable: true,
          get: () => {
            throw new Error('getter');
          },
        }),
        '{ x: [Getter] }',
      ],
      [
        new Proxy(
          { a: 1 },
          {
            get: () => {
              throw new Error('trap');
            },
            ownKeys: () => {
              throw new Error('trap');
            },
          },
        ),
        'Proxy { a: 1 }',
      ],
      [revoked, 'Proxy <Revoked Proxy>'],
      [circular, '<ref *1> { a: 1, self: [Circular *1] }'],
      [
        {
          toJSON: () => {
            throw new Error('toJSON');
          },
        },
        '{ toJSON: [Function: toJSON] }',
      ],
    ];
    for (const [value, shown] of cases) assert.equal(describe(value), shown);
  });

  it('never throws, and keeps long values short', () => {
    const hostileTag = Object.defineProperty({}, Symbol.toStringTag, {
      get: () => {
        throw new Error('tag');
      },
    });
    assert.equal(describe(hostileTag), 'a value of type object that cannot be shown');
    assert.equal(describe('a'.repeat(500)), `"${'a'.repeat(80)}…"`);
    assert.ok(describe(Array.from({ length: 1e5 }, (_, i) => i)).length <= 120);
  });
});
