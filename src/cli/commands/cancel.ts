/** `runlog cancel <tenant> <entryId>`: cancel an open entry on a running server. */
import { EXIT_OK, type Command } from '../command.ts';
import { entryBlock } from '../entry-text.ts';
import { JSON_OPTION, flag, textOption } from '../options.ts';
import { writeJson, writeLine } from '../output.ts';
import { SERVER_OPTIONS, serverTargetOf, withServer } from '../server-options.ts';

export const cancel: Command = {
  name: 'cancel',
  summary: 'cancel an open entry on a running server (it closes cancelled); prints the entry',
  usage: '<tenant> <entryId>',
  positionals: { min: 2, max: 2 },
  options: { reason: { type: 'string', value: 'TEXT', help: 'why, kept on the event' }, ...SERVER_OPTIONS, ...JSON_OPTION },
  details: 'An entry already closed is refused (EntryClosed, exit 1). --json: the Entry after the cancel.',
  async run({ values, positionals: [tenant, entryId], io }) {
    const reason = textOption(values, 'reason');
    const entry = await withServer(serverTargetOf(values, io), (queue) => queue.cancel(tenant!, entryId!, reason));
    if (flag(values, 'json')) await writeJson(io.stdout, entry);
    else await writeLine(io.stdout, entryBlock(entry));
    return EXIT_OK;
  },
};
