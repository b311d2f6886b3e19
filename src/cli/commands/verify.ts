/**
 * `runlog verify`: check the log's integrity, replay it, compare the replay with the snapshots
 * the log keeps (snapshot-check.ts) and, with --url, with a running server's state.
 */
import { PartitionView } from '../../../projections/partition-view.ts';
import { EXIT_OK, EXIT_REFUSED, type CliIo, type Command, type OptionValues } from '../command.ts';
import { compareWithServer, type LiveComparison } from '../live-compare.ts';
import { PartitionIntegrity } from '../log-integrity.ts';
import { readSnapshots, SnapshotWitness, type SnapshotVerdict } from '../snapshot-check.ts';
import { JSON_OPTION, LOG_OPTIONS, flag, integerOption, logConfigOf, stringOption } from '../options.ts';
import { writeJson, writeLine } from '../output.ts';
import { withReadLog } from '../read-log.ts';
import { SERVER_OPTIONS, serverTargetOf, withServer } from '../server-options.ts';

export const verify: Command = {
  name: 'verify',
  summary:
    "check the log's integrity, replay it and compare it with the log's snapshots; with --url, with a running server's entries (reads only; also a live log)",
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
submission, nothing moves an entry after it closed, attempts count 1, 2, 3... Snapshots (beside a file log, or
in a Kafka topic's <topic>.snapshots), each: its state must equal the replay's up to the offset it covers, and
the view it restores the same ('equal'; 'differs': a problem, each differing field named); one the queue would
not use is 'ignored' (a problem: damaged, another log's, past the log's end) or 'stale' (a note: a compaction
ran since). Then every entry the replay
holds is compared with the server's answer (entry(tenant, id)); one that differs is asked again after
catching the replay up with what the live log appended since (5 rounds). Exit 0: all checked and equal;
1: a problem or a mismatch (each printed: partition, @offset, snapshot or ticket, what); 2: usage, or no log
there. --json: { ok, partitions: [{ partition, records, entries, problems: [{ offset, problem }], notes,
snapshots: [{ name, nextOffset, takenAt, verdict, reasons }] }],
live: { url, compared, mismatches: [{ entryId, tenant, replayed, live }] } | null }.`,
  async run({ values, io }) {
    const config = logConfigOf(values);
    const target = stringOption(values, 'url') === undefined ? null : serverTargetOf(values, io);
    integerOption(values, 'partition', 0);
    // The snapshots first, then the log opened afresh: it holds every record they cover (snapshot-check.ts).
    const snapshots = await withReadLog(config, io, async (log) => {
      const partition = integerOption(values, 'partition', 0, log.partitions - 1);
      return readSnapshots(log, partition === undefined ? Array.from({ length: log.partitions }, (_, p) => p) : [partition]);
    });
    const { checks, views, verdicts } = await withReadLog(config, io, async (log) => {
      const checks: PartitionIntegrity[] = [];
      const views: PartitionView[] = [];
      const verdicts: SnapshotVerdict[][] = [];
      for (const [p, loaded] of snapshots) {
        const check = new PartitionIntegrity(p, log.partitions);
        const view = new PartitionView(p);
        const witness = new SnapshotWitness(p, loaded);
        for await (const record of log.read(p, 0n)) {
          witness.before(record.offset, view);
          view.apply(record.offset, record.key, check.check(record));
        }
        witness.before(await log.endOffset(p), view);
        check.finish();
        checks.push(check);
        views.push(view);
        verdicts.push(await witness.judge(log));
      }
      return { checks, views, verdicts };
    });
    const live = target === null ? null : await withServer(target, (server) => compareWithServer(config, io, views, server));
    const ok = isOk(checks, verdicts, live);
    await report(io, values, { checks, views, verdicts }, live === null ? null : { url: target!.url, ...live });
    return ok ? EXIT_OK : EXIT_REFUSED;
  },
};

interface Replayed {
  checks: readonly PartitionIntegrity[];
  views: readonly PartitionView[];
  verdicts: readonly (readonly SnapshotVerdict[])[];
}

/** No problem in the records, no snapshot that differs or is ignored, no live mismatch. */
function isOk(checks: Replayed['checks'], verdicts: Replayed['verdicts'], live: LiveComparison | null): boolean {
  const snapshotsOk = verdicts.flat().every(({ verdict }) => verdict === 'equal' || verdict === 'stale');
  return checks.every((check) => check.problems.length === 0) && snapshotsOk && (live === null || live.mismatches.length === 0);
}

async function report(io: CliIo, values: OptionValues, replayed: Replayed, live: (LiveComparison & { url: string }) | null): Promise<void> {
  const { checks, views, verdicts } = replayed;
  const partitions = checks.map((check, i) => ({
    partition: check.partition,
    records: check.records,
    entries: views[i]!.entries.size + views[i]!.closed.size,
    problems: check.problems,
    notes: check.notes,
    snapshots: verdicts[i]!,
  }));
  const ok = isOk(checks, verdicts, live);
  if (flag(values, 'json')) {
    await writeJson(io.stdout, { ok, partitions, live });
    return;
  }
  for (const p of partitions) {
    const verdict = p.problems.length === 0 ? 'whole' : `${p.problems.length} problem(s)`;
    await writeLine(io.stdout, `partition ${p.partition}: ${p.records} records, ${p.entries} entries replayed: ${verdict}`);
    for (const { offset, problem } of p.problems) await writeLine(io.stdout, `  @${offset}: ${problem}`);
    for (const { offset, problem } of p.notes) await writeLine(io.stdout, `  note @${offset}: ${problem}`);
    for (const snapshot of p.snapshots) await writeLine(io.stdout, snapshotText(snapshot));
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

const VERDICT_TEXT = {
  equal: 'equals the replay up to it',
  differs: 'DIFFERS from the replay up to it:',
  ignored: 'IGNORED (the queue would not use it):',
  stale: 'stale, not used (a note, not a problem):',
} as const;

function snapshotText({ name, nextOffset, verdict, reasons }: SnapshotVerdict): string {
  const covers = nextOffset === null ? '' : ` (below @${nextOffset})`;
  return [`  snapshot ${name}${covers}: ${VERDICT_TEXT[verdict]}`, ...reasons.map((reason) => `    ${reason}`)].join('\n');
}
