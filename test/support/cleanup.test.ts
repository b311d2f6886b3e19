import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { onCleanup, scratchDir, type AfterHooks } from './cleanup.ts';

/** A context that keeps its after hooks, so a test can run them and see what they throw. */
class HeldHooks implements AfterHooks {
  readonly hooks: (() => Promise<void>)[] = [];
  after(fn: () => Promise<void>): void {
    this.hooks.push(fn);
  }
}

describe('onCleanup', () => {
  it("runs a test's cleanups last-registered first, each awaited before the next, after the test", async (t) => {
    const ran: string[] = [];
    await t.test('registers three', (sub) => {
      onCleanup(sub, () => ran.push('first'));
      onCleanup(sub, async () => {
        await new Promise((resolve) => setImmediate(resolve));
        ran.push('second');
      });
      onCleanup(sub, () => ran.push('third'));
      assert.deepEqual(ran, []);
    });
    assert.deepEqual(ran, ['third', 'second', 'first']);
  });

  it('registers one after hook per test however many cleanups it holds', () => {
    const t = new HeldHooks();
    onCleanup(t, () => undefined);
    onCleanup(t, () => undefined);
    assert.equal(t.hooks.length, 1);
    const other = new HeldHooks();
    onCleanup(other, () => undefined);
    assert.equal(other.hooks.length, 1);
  });

  it('runs every cleanup when some fail, then rethrows the first failure', async () => {
    const t = new HeldHooks();
    const ran: string[] = [];
    const early = new Error('registered early');
    const late = new Error('registered late');
    onCleanup(t, () => ran.push('a'));
    onCleanup(t, () => Promise.reject(early));
    onCleanup(t, () => ran.push('b'));
    onCleanup(t, () => {
      throw late;
    });
    await assert.rejects(t.hooks[0]!(), (e) => e === late);
    assert.deepEqual(ran, ['b', 'a']);
  });

  it('runs a cleanup registered while the stack unwinds', async () => {
    const t = new HeldHooks();
    const ran: string[] = [];
    onCleanup(t, () => ran.push('outer'));
    onCleanup(t, () => onCleanup(t, () => ran.push('nested')));
    await t.hooks[0]!();
    assert.deepEqual(ran, ['nested', 'outer']);
  });
});

describe('scratchDir', () => {
  it('removes its directory after the cleanups registered after it ran, with the directory still there', async (t) => {
    let dir = '';
    let presentAtClose = false;
    await t.test('opens something in a scratch dir', async (sub) => {
      dir = await scratchDir(sub, 'runlog-cleanup-');
      onCleanup(sub, async () => {
        presentAtClose = (await stat(dir)).isDirectory();
      });
    });
    assert.equal(presentAtClose, true);
    await assert.rejects(stat(dir), { code: 'ENOENT' });
  });
});
