/** Worker semantics, ensureFresh: run what is owed now, or wait for the run in progress elsewhere. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { submitOf } from '../../contract/fixtures.ts';
import { deferred, turns, workerOn, type WorkerBackend } from '../fixtures.ts';

const text = (bytes: Uint8Array | null): string | null => (bytes === null ? null : new TextDecoder().decode(bytes));

export function ensureFreshTests(backend: WorkerBackend): void {
  it('ensureFresh: nothing owed answers undefined; a pending entry runs now in the caller; a failure rejects with its error, then Parked', async (t) => {
    const fx = await workerOn(backend, t);
    const { worker } = fx.worker();
    const seen: string[] = [];
    worker.handle('build', ({ input }) => {
      const what = text(input)!;
      seen.push(what);
      if (what.startsWith('bad')) throw new RangeError(`cannot ${what}`);
      return `built ${what}`;
    });
    assert.equal(await worker.ensureFresh('acme', 't1', 'build'), undefined);
    await fx.queue.submit(submitOf('acme', 't1', { agent: 'deploy' }));
    assert.equal(await worker.ensureFresh('acme', 't2', 'build'), undefined, "another agent's entry is not owed");
    const later = await fx.queue.submit(submitOf('acme', 't2', { input: 'later', notBefore: fx.clock.nowMs + 60_000 }));
    assert.equal(await worker.ensureFresh('acme', 't2', 'build'), undefined);
    assert.deepEqual(seen, ['later'], 'ran now, without waiting for its notBefore');
    assert.equal(text((await fx.queue.entry('acme', later.entryId)).result), 'built later');
    const bad = await fx.queue.submit(submitOf('acme', 't3', { input: 'bad one', maxAttempts: 2 }));
    await assert.rejects(
      worker.ensureFresh('acme', 't3', 'build'),
      (error: Error) => error instanceof RangeError && error.message === 'cannot bad one',
    );
    await assert.rejects(worker.ensureFresh('acme', 't3', 'build'), { code: 'Parked' });
    assert.equal((await fx.queue.entry('acme', bad.entryId)).outcome, 'failed');
  });

  it('ensureFresh waits for a run in progress elsewhere; Parked if that run parks the entry', async (t) => {
    const fx = await workerOn(backend, t);
    const a = fx.worker();
    a.worker.handle('build', () => assert.fail('A must not run an entry held elsewhere'));
    const b = fx.worker();
    const gates = [deferred(), deferred()];
    const started = [deferred(), deferred()];
    let call = 0;
    b.worker.handle('build', async () => {
      const i = call++;
      started[i]!.resolve();
      await gates[i]!.promise;
      if (i === 1) throw new Error('broken');
      return 'done';
    });
    await fx.queue.submit(submitOf('acme', 't1'));
    const runB = b.worker.runDue('build');
    await started[0]!.promise;
    let settled = false;
    const fresh = a.worker.ensureFresh('acme', 't1', 'build').finally(() => (settled = true));
    await turns(5);
    assert.equal(settled, false);
    gates[0]!.resolve();
    assert.equal(await fresh, undefined);
    await runB;
    await fx.queue.submit(submitOf('acme', 't1', { maxAttempts: 1 }));
    const runB2 = b.worker.runDue('build');
    await started[1]!.promise;
    const parked = a.worker.ensureFresh('acme', 't1', 'build');
    gates[1]!.resolve();
    await assert.rejects(parked, { code: 'Parked' });
    await runB2;
  });
}
