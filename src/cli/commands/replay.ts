/** `runlog replay`: fold the whole log into a fresh view and summarise it. */
import { addMetrics, emptyMetrics } from '../../../projections/metrics.ts';
import { replayPartition } from '../../projector/replay.ts';
import { EXIT_OK, type Command } from '../command.ts';
import { JSON_OPTION, LOG_OPTIONS, flag, logConfigOf } from '../options.ts';
import { writeJson, writeLine } from '../output.ts';
import { withReadLog } from '../read-log.ts';

export const replay: Command = {
  name: 'replay',
  summary: 'fold the whole log into a fresh view and summarise it (reads only; also a live log)',
  usage: '',
  positionals: { min: 0, max: 0 },
  options: { ...LOG_OPTIONS, ...JSON_OPTION },
  details: '--json: { seconds, partitions: [{ partition, entries, open, threads, nextOffset }], totals: { enqueued, ... } }.',
  async run({ values, io }) {
    return withReadLog(logConfigOf(values), io, async (log) => {
      const started = performance.now();
      // Only reads: it claims nothing, so a live Kafka writer is not fenced.
      const views = await Promise.all(Array.from({ length: log.partitions }, (_, p) => replayPartition(log, p)));
      const seconds = (performance.now() - started) / 1000;
      const totals = emptyMetrics();
      for (const view of views) addMetrics(totals, view.metrics);
      const partitions = views.map((v) => ({
        partition: v.partition,
        entries: v.entries.size + v.closed.size,
        open: v.openCount,
        threads: v.threads.size,
        nextOffset: v.nextOffset,
      }));
      if (flag(values, 'json')) {
        await writeJson(io.stdout, { seconds, partitions, totals });
        return EXIT_OK;
      }
      await writeLine(io.stdout, `replayed ${views.length} partition(s) in ${seconds.toFixed(2)} s`);
      for (const p of partitions)
        await writeLine(
          io.stdout,
          `  partition ${p.partition}: ${p.entries} entries (${p.open} open), ${p.threads} threads, next offset ${p.nextOffset}`,
        );
      const { enqueued, succeeded, failed, retried, expired, cancelled, dropped } = totals;
      await writeLine(
        io.stdout,
        `  enqueued ${enqueued}  succeeded ${succeeded}  failed ${failed}  retried ${retried}  expired ${expired}  cancelled ${cancelled}  pruned ${dropped}`,
      );
      return EXIT_OK;
    });
  },
};
