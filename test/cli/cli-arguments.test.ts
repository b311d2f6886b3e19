/**
 * The command line's arguments, table-driven: every malformed call exits 2 with a message
 * naming the bad flag or value and writes nothing to the log it names; --help of every
 * command exits 0 and names each of its options; --json output parses. Run in process
 * (run-cli.ts: the binary's own dispatcher and command table).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMMANDS } from '../../src/cli/commands/index.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { filesUnder } from '../log/file-damage.ts';
import { scratchDir } from '../support/cleanup.ts';
import { runCli } from './run-cli.ts';

/** [the arguments after `runlog` (DIR: the scratch log), what stderr must say]. */
const MALFORMED: readonly [args: string[], says: RegExp][] = [
  [[], /no command given/],
  [['frobnicate'], /unknown command "frobnicate"/],
  [['--dir', 'DIR'], /unknown command "--dir"/],
  // history
  [['history', '--dir', 'DIR'], /history needs \[<tenant>\] <ticket>/],
  [['history', 'acme', '0-1', 'extra', '--dir', 'DIR'], /unexpected argument "extra"/],
  [['history', 'acme', '0-1', '--dir', 'DIR', '--bogus'], /Unknown option '--bogus'/],
  [['history', 'acme', '0-1', '--dir'], /Option '--dir <value>' argument missing/],
  [['history', 'acme', '0-1', '--dir', 'DIR', '--json=yes'], /--json.*does not take an argument/],
  [['history', 'acme', '0-1', '--dir', ''], /--dir must not be empty/],
  [['history', 'acme', '0-1', '--dir', 'DIR', '--brokers', 'localhost:9092'], /--dir names a file log, --brokers\/--topic a Kafka log/],
  [['history', 'acme', '0-1', '--brokers', 'localhost:9092'], /--brokers and --topic go together/],
  [['history', 'acme', '0-1', '--topic', 'runlog'], /--brokers and --topic go together/],
  [['history', 'acme', '0-1', '--brokers', 'localhost', '--topic', 'runlog'], /--brokers must be HOST:PORT\[,...\], got "localhost"/],
  // find
  [['find', 'acme', '--dir', 'DIR'], /unexpected argument "acme"/],
  [['find', '--dir', 'DIR', '--status', 'done'], /--status must be open or closed, got "done"/],
  [
    ['find', '--dir', 'DIR', '--outcome', 'lost'],
    /--outcome must be one of succeeded, failed, cancelled, expired, threadDeleted, got "lost"/,
  ],
  [['find', '--dir', 'DIR', '--since', 'yesterday'], /--since must be epoch ms, an ISO date-time with its zone .*got "yesterday"/],
  [['find', '--dir', 'DIR', '--until', '2026-12-01'], /--until must be epoch ms, an ISO date-time with its zone .*got "2026-12-01"/],
  [['find', '--dir', 'DIR', '--since', '2026-02-31T00:00:00Z'], /--since must be epoch ms, an ISO date-time .*got "2026-02-31T00:00:00Z"/],
  [['find', '--dir', 'DIR', '--until', '2026-12-01T24:30:00+01:00'], /--until must be epoch ms, .*got "2026-12-01T24:30:00\+01:00"/],
  [['find', '--dir', 'DIR', '--since', '2000', '--until', '1000'], /--until must be after --since, got 2000 \.\. 1000/],
  [['find', '--dir', 'DIR', '--metadata', 'shop'], /--metadata must be KEY=VALUE, got "shop"/],
  [['find', '--dir', 'DIR', '--metadata', 'a=1', '--metadata', 'a=2'], /--metadata names "a" twice/],
  [['find', '--dir', 'DIR', '--limit', '0'], /--limit must be an integer >= 1, got "0"/],
  // A negative value after its option: the option's own check names it (parseArgs alone answered "ambiguous").
  [['find', '--dir', 'DIR', '--limit', '-1'], /--limit must be an integer >= 1, got "-1"/],
  [['state', '--dir', 'DIR', '--at', '-5'], /--at must be a time .*got "-5"/],
  [['state', '--dir', 'DIR', '--at', '0', '--partition', '-1'], /--partition must be an integer >= 0, got "-1"/],
  [['find', '--dir', 'DIR', '--partition', '2'], /--partition must be an integer in 0..1, got "2"/],
  [['find', '--dir', 'DIR', '--tenant', ''], /--tenant must not be empty/],
  [['find', '--dir', 'DIR', '--key', ''], /--key must not be empty/],
  [['find', '--dir', 'DIR', '--agent'], /Option '--agent <value>' argument missing/],
  [['find', '--dir', 'DIR', '--entry', 'x'], /Unknown option '--entry'/],
  [['find', '--dir', 'DIR/nowhere'], /InvalidArgument: .*nowhere holds no runlog file log/],
  // state
  [['state', '--dir', 'DIR'], /state needs --at WHEN/],
  [['state', '--dir', 'DIR', '--at', 'yesterday'], /--at must be a time \(epoch ms, or an ISO date-time .*got "yesterday"/],
  [['state', '--dir', 'DIR', '--at', '2026-02-30T00:00:00Z'], /--at must be a time .*got "2026-02-30T00:00:00Z"/],
  [['state', '--dir', 'DIR', '--at', '2026-04-31T10:00+02:00'], /--at must be a time .*got "2026-04-31T10:00\+02:00"/],
  [['state', '--dir', 'DIR', '--at', '@x'], /--at @ takes offsets: @OFFSET or @a,b,\.\.\. \(one per partition\), got "@x"/],
  [['state', '--dir', 'DIR', '--at', '@-1'], /--at @ takes offsets.*got "@-1"/],
  [['state', '--dir', 'DIR', '--at', '@3'], /--at @OFFSET needs --partition \(the log has 2 partitions\), got "@3"/],
  [['state', '--dir', 'DIR', '--at', '@1,2,3'], /--at @a,b,\.\.\. needs 2 offsets, one per partition.*got "@1,2,3"/],
  [['state', '--dir', 'DIR', '--at', '@1', '--partition', '5'], /--partition must be an integer in 0..1, got "5"/],
  [['state', '--dir', 'DIR', '--at', '0', '--entry', ''], /--entry must not be empty/],
  [['state', '--dir', 'DIR', '--at', '0', '--tenant', ''], /--tenant must not be empty/],
  [['state', 'now', '--dir', 'DIR', '--at', '0'], /unexpected argument "now"/],
  [['state', '--dir', 'DIR/nowhere', '--at', '0'], /InvalidArgument: .*nowhere holds no runlog file log/],
  // verify
  [['verify', 'all', '--dir', 'DIR'], /unexpected argument "all"/],
  [['verify', '--dir', 'DIR', '--partition', '2'], /--partition must be an integer in 0..1, got "2"/],
  [['verify', '--dir', 'DIR', '--url', ''], /--url must not be empty/],
  [
    ['verify', '--dir', 'DIR', '--url', 'http://127.0.0.1:1', '--retry-ms', 'soon'],
    /--retry-ms must be an integer in 0..600000, got "soon"/,
  ],
  [['verify', '--dir', 'DIR', '--snapshot'], /Unknown option '--snapshot'/],
  [['verify', '--dir', 'DIR/nowhere'], /InvalidArgument: .*nowhere holds no runlog file log/],
  // replay
  [['replay', 'now', '--dir', 'DIR'], /unexpected argument "now"/],
  [['replay', '--dir', 'DIR', '--partitions', '3'], /Unknown option '--partitions'/],
  [['replay', '--dir', 'DIR/nowhere'], /InvalidArgument: .*nowhere holds no runlog file log/],
  // tail
  [['tail', '--dir', 'DIR', '--limit', '0'], /--limit must be an integer >= 1, got "0"/],
  [['tail', '--dir', 'DIR', '--limit', 'ten'], /--limit must be an integer >= 1, got "ten"/],
  [['tail', '--dir', 'DIR', '--limit', '1.5'], /--limit must be an integer >= 1, got "1.5"/],
  [['tail', '--dir', 'DIR', '--poll-ms', '0'], /--poll-ms must be an integer in 1..60000, got "0"/],
  [['tail', '--dir', 'DIR', '--partition', 'one'], /--partition must be an integer >= 0, got "one"/],
  [['tail', '--dir', 'DIR', '--partition=-1'], /--partition must be an integer >= 0, got "-1"/],
  [['tail', '--dir', 'DIR', '--partition', '-1'], /--partition must be an integer >= 0, got "-1"/],
  [['tail', '--dir', 'DIR', '--partition', '7'], /--partition must be an integer in 0..1, got "7"/],
  [['tail', '--dir', 'DIR', '--from', 'yesterday'], /--from must be start, end, an offset or one offset per partition.*got "yesterday"/],
  [['tail', '--dir', 'DIR', '--from', '1,2,3'], /--from must be 0 or 2 offsets, one per partition.*got "1,2,3"/],
  [['tail', '--dir', 'DIR', '--partition', '0', '--from', '1,2'], /--from must be start, end or an offset, got "1,2"/],
  [['tail', '--dir', 'DIR', '--tenant', ''], /--tenant must not be empty/],
  [['tail', '--dir', 'DIR', '--thread', ''], /--thread must not be empty/],
  [['tail', '--dir', 'DIR', '--entry', ''], /--entry must not be empty/],
  [['tail', 'acme', '--dir', 'DIR'], /unexpected argument "acme"/],
  [['tail', '--dir', 'DIR', '--type', 'Finished'], /--type must be an event type \(Submitted, Leased, .*\), got "Finished"/],
  [['tail', '--dir', 'DIR', '--agent', ''], /--agent must not be empty/],
  // export
  [['export', '--dir', 'DIR', '--from', 'end,'], /--from must be start, end, an offset or one offset per partition.*got "end,"/],
  [['export', '--dir', 'DIR', '--partition', '2'], /--partition must be an integer in 0..1, got "2"/],
  [['export', '--dir', 'DIR', '--out', ''], /--out must not be empty/],
  [['export', '--dir', 'DIR', '--format', 'xml'], /--format must be jsonl or avro, got "xml"/],
  [['export', '--dir', 'DIR', '--format', 'avro'], /--format avro writes a file: give --out FILE/],
  [['export', '--dir', 'DIR', '--format', 'avro', '--out', 'DIR/x.avro', '--json'], /--json and --format avro: give one/],
  [['export', '--dir', 'DIR', '--compress'], /Unknown option '--compress'/],
  // migrate (refused before any broker is asked)
  [['migrate', '--dir', 'DIR', '--topic', 'runlog'], /--brokers is required/],
  [['migrate', '--dir', 'DIR', '--brokers', 'localhost:9092'], /--topic is required/],
  [['migrate', '--dir', 'DIR', '--brokers', 'localhost', '--topic', 'runlog'], /--brokers must be HOST:PORT\[,...\], got "localhost"/],
  [['migrate', '--dir', 'DIR', '--brokers', 'localhost:9092', '--topic', ''], /--topic must not be empty/],
  [['migrate', '--dir', '', '--brokers', 'localhost:9092', '--topic', 'runlog'], /--dir must not be empty/],
  [
    ['migrate', '--dir', 'DIR/nowhere', '--brokers', 'localhost:9092', '--topic', 'runlog'],
    /InvalidArgument: .*nowhere holds no runlog file log/,
  ],
  [['migrate', 'now', '--dir', 'DIR', '--brokers', 'localhost:9092', '--topic', 'runlog'], /unexpected argument "now"/],
  [['migrate', '--dir', 'DIR', '--brokers', 'localhost:9092', '--topic', 'runlog', '--partitions', '3'], /Unknown option '--partitions'/],
];

async function scratchLog(t: import('node:test').TestContext): Promise<{ dir: string; entryId: string }> {
  const dir = await scratchDir(t, 'runlog-cli-args-');
  const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 2 });
  const ticket = await queue.submit({ tenant: 'acme', thread: 'order-1', agent: 'mail', input: 'send receipt' });
  await queue.submit({ tenant: 'globex', thread: 'order-2', agent: 'mail', input: 'later' });
  await queue.stop();
  return { dir, entryId: ticket.entryId };
}

describe('runlog arguments', () => {
  it('every malformed call: exit 2, a message naming the bad flag or value, nothing written to the log', async (t) => {
    const { dir } = await scratchLog(t);
    const before = await filesUnder(dir);
    for (const [args, says] of MALFORMED) {
      const run = await runCli(args.map((arg) => arg.replace(/^DIR/, dir)));
      const call = `runlog ${args.join(' ')}`;
      assert.equal(run.code, 2, `${call}: ${run.stderr}`);
      assert.match(run.stderr, says, call);
      assert.equal(run.stdout, '', call);
    }
    assert.deepEqual(await filesUnder(dir), before);
  });

  it('runlog --help lists every command; <command> --help exits 0 and names each of its options', async () => {
    const main = await runCli(['--help']);
    assert.equal(main.code, 0);
    for (const command of COMMANDS) assert.match(main.stdout, new RegExp(`^  ${command.name} `, 'm'));
    assert.match(main.stdout, /exit codes: 0 ok, 1 refused .*, 2 usage/);
    for (const command of COMMANDS) {
      if ('raw' in command) continue;
      for (const help of ['--help', '-h']) {
        const run = await runCli([command.name, help]);
        assert.equal(run.code, 0, `${command.name} ${help}`);
        assert.match(run.stdout, new RegExp(`^usage: runlog ${command.name}`));
        for (const option of Object.keys(command.options))
          assert.match(run.stdout, new RegExp(`--${option}\\b`), `${command.name}: --${option}`);
      }
    }
  });

  it('--json output parses: one document, or one a line for streams of events', async (t) => {
    const { dir, entryId } = await scratchLog(t);
    const lines = (text: string): Record<string, unknown>[] =>
      text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);

    const history = await runCli(['history', 'acme', entryId, '--dir', dir, '--json']);
    assert.equal(history.code, 0, history.stderr);
    const [submitted] = lines(history.stdout);
    assert.equal(submitted!.type, 'Submitted');
    assert.equal(submitted!.entryId, entryId);
    assert.equal(Buffer.from(submitted!.input as string, 'base64').toString(), 'send receipt');
    assert.equal(typeof submitted!.offset, 'number');

    const replay = await runCli(['replay', '--dir', dir, '--json']);
    assert.equal(replay.code, 0, replay.stderr);
    const summary = JSON.parse(replay.stdout) as { partitions: { entries: number }[]; totals: { enqueued: number } };
    assert.equal(summary.totals.enqueued, 2);
    assert.equal(summary.partitions.length, 2);

    const records = lines((await runCli(['export', '--dir', dir])).stdout).length; // the ticket keys and the two submissions
    for (const args of [['tail', '--from', 'start', '--limit', String(records), '--json'], ['export', '--json'], ['export']]) {
      const run = await runCli([...args, '--dir', dir]);
      assert.equal(run.code, 0, run.stderr);
      const events = lines(run.stdout);
      assert.equal(events.filter((event) => event.type === 'Submitted').length, 2, args.join(' '));
      assert.ok(events.every((event) => typeof event.partition === 'number' && typeof event.at === 'number'));
      assert.ok(
        events.every((event) => !('secret' in event)),
        'the ticket key is never printed',
      );
    }

    const acme = lines((await runCli(['export', '--dir', dir, '--tenant', 'acme'])).stdout);
    assert.deepEqual(
      acme.map((event) => [event.type, event.tenant]),
      [['Submitted', 'acme']],
    );
  });
});
