/** `runlog get <tenant> <entryId>`: an entry as a running server knows it. */
import { EXIT_OK, type Command } from '../command.ts';
import { entryBlock } from '../entry-text.ts';
import { JSON_OPTION, flag } from '../options.ts';
import { writeJson, writeLine } from '../output.ts';
import { SERVER_OPTIONS, serverTargetOf, withServer } from '../server-options.ts';

export const get: Command = {
  name: 'get',
  summary: 'print an entry (status, attempts, lease, result) from a running server',
  usage: '<tenant> <entryId>',
  positionals: { min: 2, max: 2 },
  options: { ...SERVER_OPTIONS, ...JSON_OPTION },
  details: '--json: the Entry, bytes (input, result) as base64, times as epoch ms.',
  async run({ values, positionals: [tenant, entryId], io }) {
    const [entry, now] = await withServer(
      serverTargetOf(values, io),
      async (queue) => [await queue.entry(tenant!, entryId!), queue.now()] as const,
    );
    if (flag(values, 'json')) await writeJson(io.stdout, entry);
    else await writeLine(io.stdout, entryBlock(entry, now));
    return EXIT_OK;
  },
};
