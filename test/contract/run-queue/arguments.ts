/** RunQueue contract, bad arguments: InvalidArgument naming the value, and nothing written. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { queueOn, refused, submitOf, type Backend } from '../fixtures.ts';

export function argumentsTests(backend: Backend): void {
  it('bad input is InvalidArgument naming the value, and writes nothing', async (t) => {
    const { queue, log } = await queueOn(backend, t, { maxInputBytes: 1024 });
    const bad: [string, () => Promise<unknown>][] = [
      ['tenant', () => queue.submit({ thread: 't', agent: 'a', input: 'x' } as never)],
      ['oversized', () => queue.submit(submitOf('acme', 't', { input: new Uint8Array(2048) }))],
      ['priority', () => queue.submit(submitOf('acme', 't', { priority: 1.5 }))],
      ['strategy', () => queue.submit(submitOf('acme', 't', { strategy: 'sometimes' }))],
      ['colour', () => queue.submit(submitOf('acme', 't', { colour: 'red' }))],
      ['deadline', () => queue.submit(submitOf('acme', 't', { notBefore: 2_000_000_000_000, deadline: 1_999_999_999_999 }))],
      ['ttlMs', () => queue.take({ agents: ['build'], holder: 'w', ttlMs: -5 })],
      ['agents', () => queue.take({ agents: [], holder: 'w', ttlMs: 5 })],
    ];
    for (const [name, action] of bad) {
      await refused(log, 'InvalidArgument', action);
      await assert.rejects(action, (error: Error) => error.message.includes(name === 'oversized' ? '2048' : name), name);
    }
    await queue.submit(submitOf('acme', 't'));
    const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: 10 }))!;
    await refused(log, 'InvalidArgument', () => queue.extend(taken.lease, -1));
    await refused(log, 'InvalidArgument', () => queue.close(taken.lease, { status: 'maybe' as never }));
  });
}
