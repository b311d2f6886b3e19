import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { defaultBackoff } from '../../src/worker/backoff.ts';
import { defaultHolder } from '../../src/worker/options.ts';
import { Worker } from '../../src/worker/worker.ts';

describe('Worker options and registration', () => {
  it('bad options are InvalidArgument naming the value', async (t) => {
    const queue = await openRunQueueOnLog(await openMemoryLog({ partitions: 1 }));
    t.after(() => queue.stop());
    const bad: [object, RegExp][] = [
      [{ colour: 'red' }, /unknown option "colour"/],
      [{ concurrency: 0 }, /concurrency must be an integer from 1 .* got 0/],
      [{ leaseMs: 1.5 }, /leaseMs .* got 1.5/],
      [{ pollMs: '1s' }, /pollMs .* got "1s"/],
      [{ maxAttempts: -1 }, /maxAttempts .* got -1/],
      [{ backoff: 1000 }, /backoff must be a function, got 1000/],
      [{ holder: '' }, /holder must be a non-empty string/],
      [{ timers: {} }, /timers must have setTimeout/],
      [{ tenants: [] }, /tenants must be a non-empty array of names, got \[\]/],
      [{ tenants: 'acme' }, /tenants must be a non-empty array of names, got "acme"/],
      [{ tenants: ['acme', ''] }, /tenants\[1\] must be a non-empty string, got ""/],
      [{ tenants: null }, /tenants .* got null/],
    ];
    for (const [options, message] of bad)
      assert.throws(
        () => new Worker(queue, options as never),
        (e: Error & { code?: string }) => e.code === 'InvalidArgument' && message.test(e.message),
      );
  });

  it('one handler per agent, registered before run', async (t) => {
    const queue = await openRunQueueOnLog(await openMemoryLog({ partitions: 1 }));
    t.after(() => queue.stop());
    const worker = new Worker(queue);
    worker.handle('build', () => undefined);
    assert.throws(() => worker.handle('build', () => undefined), {
      code: 'InvalidArgument',
      message: /agent "build" already has a handler/,
    });
    assert.throws(() => worker.handleEvery('sweep', 0, () => undefined), { code: 'InvalidArgument', message: /everyMs .* got 0/ });
    assert.throws(() => worker.handle('deploy', 'nope' as never), { code: 'InvalidArgument' });
    await assert.rejects(worker.ensureFresh('acme', 't', 'deploy'), { code: 'InvalidArgument', message: /"deploy" has no handler/ });
    const controller = new AbortController();
    const running = worker.run(controller.signal);
    assert.throws(() => worker.handle('late', () => undefined), { code: 'InvalidArgument' });
    controller.abort();
    await running;
  });

  it('a worker with tenants refuses periodic work outside them and ensureFresh of another tenant', async (t) => {
    const queue = await openRunQueueOnLog(await openMemoryLog({ partitions: 1 }));
    t.after(() => queue.stop());
    const worker = new Worker(queue, { tenants: ['acme'] });
    worker.handle('build', () => undefined);
    assert.throws(() => worker.handleEvery('sweep', 1000, () => undefined), {
      code: 'InvalidArgument',
      message: /periodicTenant "runlog", which this worker's tenants \[ 'acme' \] leave out/,
    });
    await assert.rejects(worker.ensureFresh('globex', 't', 'build'), {
      code: 'InvalidArgument',
      message: /tenant "globex" is not one of this worker's tenants/,
    });
    await worker.ensureFresh('acme', 't', 'build');
    const periodic = new Worker(queue, { tenants: ['acme', 'ops'], periodicTenant: 'ops' });
    periodic.handleEvery('sweep', 1000, () => undefined);
  });

  it('default backoff doubles from 1 s to at most 10 min; holders are host/pid/random', () => {
    assert.deepEqual([1, 2, 3, 10, 11, 100].map(defaultBackoff), [1000, 2000, 4000, 512_000, 600_000, 600_000]);
    const holder = defaultHolder();
    assert.match(holder, new RegExp(`/${process.pid}/[0-9a-f]{8}$`));
    assert.notEqual(holder, defaultHolder());
  });
});
