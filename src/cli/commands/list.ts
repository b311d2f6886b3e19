/** `runlog list <tenant> <thread>`: the open entries of a thread, in the order they run. */
import { EXIT_OK, type Command } from '../command.ts';
import { entryLine } from '../entry-text.ts';
import { JSON_OPTION, flag } from '../options.ts';
import { writeJson, writeLine } from '../output.ts';
import { SERVER_OPTIONS, serverTargetOf, withServer } from '../server-options.ts';

export const list: Command = {
  name: 'list',
  summary: "list a thread's open entries, in the order they run, from a running server",
  usage: '<tenant> <thread>',
  positionals: { min: 2, max: 2 },
  options: { ...SERVER_OPTIONS, ...JSON_OPTION },
  details: 'Human output: one entry a line (id, submitted, agent, lease, attempts, input). --json: { entries: Entry[] }.',
  async run({ values, positionals: [tenant, thread], io }) {
    const [entries, now] = await withServer(
      serverTargetOf(values, io),
      async (queue) => [await queue.openEntries(tenant!, thread!), queue.now()] as const,
    );
    if (flag(values, 'json')) await writeJson(io.stdout, { entries });
    else if (entries.length === 0) await writeLine(io.stdout, `no open entries in thread ${thread} of tenant ${tenant}`);
    else for (const entry of entries) await writeLine(io.stdout, entryLine(entry, now));
    return EXIT_OK;
  },
};
