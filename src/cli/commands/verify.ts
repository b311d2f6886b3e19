/** `runlog verify`: check the log's integrity, replay it, and compare the replay with a running server's state. */
import { PartitionView } from '../../../projections/partition-view.ts';
import { EXIT_OK, EXIT_REFUSED, type CliIo, type Command, type OptionValues } from '../command.ts';
import { compareWithServer, type LiveComparison } from '../live-compare.ts';
import { PartitionIntegrity } from '../log-integrity.ts';
import { JSON_OPTION, LOG_OPTIONS, flag, integerOption, logConfigOf, stringOption } from '../options.ts';
import { writeJson, writeLine } from '../output.ts';
import { withReadLog } from '../read-log.ts';
import { SERVER_OPTIONS, serverTargetOf, withServer } from '../server-options.ts';

export const verify: Command = {
  name: 'verify',
  summary:
    "check the log's integrity and replay it; with --url, compare the replay with a running server's entries (reads only; also a live log)",
  usage: '',
  positionals: { min: 0, max: 0 },
  options: {
    ...LOG_OPTIONS,
    partition: { type: 'string', value: 'N', help: 'only partition N (default: every partition)' },
    ...SERVER_OPTIONS,
    url: {
      type: 'string',
      value: 'URL',
      help: "compare with this running server's state (serving the same log); without it, only the log is checked",
    },
    ...JSON_OPTION,
  },
  details: `Integrity, per partition: offsets only go up, every record decodes, each is written under its event's
key, entry ids name their partition and seqs only go up, an entry's events name one tenant and follow its
submission, nothing moves an entry after it closed, attempts count 1, 2, 3... Then every entry the replay
holds is compared with the server's answer (entry(tenant, id)); one that differs is asked again after
catching the replay up with what the live log appended since (5 rounds). Exit 0: all checked and equal;
1: a problem or a mismatch (each printed: partition, @offset or ticket, what); 2: usage, or no log there.
--json: { ok, partitions: [{ partition, records, entries, problems: [{ offset, problem }], notes }],
live: { url, compared, mismatches: [{ entryId, tenant, replayed, live }] } | null }.`,
  async run({ values, io }) {
    const config = logConfigOf(values);
    const target = stringOption(values, 'url') === undefined ? null : serverTargetOf(values, io);
    integerOption(values, 'partition', 0);
    const { checks, views } = await withReadLog(config, io, async (log) => {
      const partition = integerOption(values, 'partition', 0, log.partitions - 1);
      const partitions = partition === undefined ? Array.from({ length: log.partitions }, (_, p) => p) : [partition];
      const checks: PartitionIntegrity[] = [];
      const views: PartitionView[] = [];
      for (const p of partitions) {
        const check = new PartitionIntegrity(p, log.partitions);
        const view = new PartitionView(p);
        for await (const record of log.read(p, 0n)) view.apply(record.offset, record.key, check.check(record));
        check.finish();
        checks.push(check);
        views.push(view);
      }
      return { checks, views };
    });
    const live = target === null ? null : await withServer(target, (server) => compareWithServer(config, io, views, server));
    const ok = checks.every((check) => check.problems.length === 0) && (live === null || live.mismatches.length === 0);
    await report(io, values, checks, views, live === null ? null : { url: target!.url, ...live });
    return ok ? EXIT_OK : EXIT_REFUSED;
  },
};

async function report(
  io: CliIo,
  values: OptionValues,
  checks: readonly PartitionIntegrity[],
  views: readonly PartitionView[],
  live: (LiveComparison & { url: string }) | null,
): Promise<void> {
  const partitions = checks.map((check, i) => ({
    partition: check.partition,
    records: check.records,
    entries: views[i]!.entries.size,
    problems: check.problems,
    notes: check.notes,
  }));
  const ok = partitions.every((p) => p.problems.length === 0) && (live === null || live.mismatches.length === 0);
  if (flag(values, 'json')) {
    await writeJson(io.stdout, { ok, partitions, live });
    return;
  }
  for (const p of partitions) {
    const verdict = p.problems.length === 0 ? 'whole' : `${p.problems.length} problem(s)`;
    await writeLine(io.stdout, `partition ${p.partition}: ${p.records} records, ${p.entries} entries replayed: ${verdict}`);
    for (const { offset, problem } of p.problems) await writeLine(io.stdout, `  @${offset}: ${problem}`);
    for (const { offset, problem } of p.notes) await writeLine(io.stdout, `  note @${offset}: ${problem}`);
  }
  if (live !== null) {
    await writeLine(
      io.stdout,
      `compared ${live.compared} entries with the server at ${live.url}: ${live.mismatches.length === 0 ? 'all equal' : `${live.mismatches.length} differ`}`,
    );
    for (const m of live.mismatches)
      await writeLine(
        io.stdout,
        `  ${m.tenant} ${m.entryId}: replayed ${JSON.stringify(m.replayed)}\n    server ${JSON.stringify(m.live)}`,
      );
  }
  await writeLine(io.stdout, ok ? 'verified: no problem found' : 'NOT verified: see above');
}
