/**
 * Child process of snapshot-stretches.test.ts: a RunQueue on the file log in argv[2] (fsync
 * on) with snapshots due often, holding more closed tickets than one stretch of a snapshot's
 * columns (8,192): round 0 closes 12,000 in bulk first. Then 4 callers run whole lifecycles.
 * Prints each acknowledged submission and close (crash-rounds.ts reads them; the bulk's
 * sampled), `loaded` after the bulk, `freezing <rows>` when a snapshot freezes the ticket
 * index (it begins), and `saved` when the store has saved one; the parent SIGKILLs it while
 * a snapshot is being written.
 */
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { TicketIndex } from '../../projections/ticket-index.ts';
import { lifecycles } from './crash-lifecycles.ts';
import { closeInBulk, sampled } from './snapshot-stretches-bulk.ts';

const dir = process.argv[2]!;
const round = process.argv[3] ?? '0';
const freeze = TicketIndex.prototype.freeze;
TicketIndex.prototype.freeze = function (this: TicketIndex) {
  process.stdout.write(`freezing ${this.size}\n`);
  return freeze.call(this);
};
const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 1, snapshots: { everyRecords: 500, everyMs: 25 } });
const store = queue.log.snapshots!;
const save = store.save.bind(store);
store.save = async (...args) => {
  await save(...args);
  process.stdout.write('saved\n');
};
process.stdout.write('ready\n');
const acks = {
  submitted: (entryId: string, input: string) => process.stdout.write(`submitted ${entryId} ${input}\n`),
  closed: (entryId: string) => process.stdout.write(`closed ${entryId}\n`),
};
// The bulk's acknowledgements are sampled: reading back 12,000 closed entries after each kill is slow.
if (round === '0') await closeInBulk(queue, 'bulk', `r${round}-bulk`, 12_000, () => {}, sampled(acks, 100));
process.stdout.write('loaded\n');
await Promise.all(Array.from({ length: 4 }, (_, id) => lifecycles(queue, round, id)));
