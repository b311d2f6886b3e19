/**
 * The batch handlers: submit many entries, take and start several, close several. A batch
 * item outside the caller's scope: a submission refuses the whole call (Forbidden, nothing
 * written, as submit does); a close is answered as submit's lease refusal for that item alone.
 */
import { RunlogError } from '../../errors.ts';
import { MAX_BATCH } from '../../queue/requests.ts';
import type { BatchAnswer, Entry, LeaseClose, StartRequest } from '../../queue/types.ts';
import {
  closeRequestFromJson,
  closedToJson,
  closesToJson,
  startedToJson,
  submitFromJson,
  ticketsToJson,
  type CloseBatchBody,
  type ClosedBatchAnswer,
  type ClosesAnswer,
  type StartedJson,
  type SubmitBatchBody,
  type SubmittedAnswer,
  type TakeStartedBody,
} from '../../wire/index.ts';
import type { RouteRequest } from '../route.ts';
import { requireLeaseScope, requireSubmitScope, takeTenants } from '../scope.ts';

export async function submitBatch({ queue, caller, body }: RouteRequest<SubmitBatchBody>): Promise<SubmittedAnswer> {
  const requests = body.requests.map((request, i) => {
    requireSubmitScope(caller, request.tenant);
    return itemOf(`requests[${i}]`, () => submitFromJson(request));
  });
  return ticketsToJson(await queue.submitBatch(requests));
}

export async function takeStarted({ queue, caller, body }: RouteRequest<TakeStartedBody>): Promise<{ started: StartedJson[] }> {
  const { tenants, ...terms } = body;
  const scoped = takeTenants(caller, tenants);
  const request: StartRequest = { ...terms, ...(scoped === undefined ? {} : { tenants: scoped }) };
  return { started: (await queue.takeStarted(request)).map(startedToJson) };
}

/** With `entries: false`, each closed item is answered `{ closed: true }`, its entry (its input, its result) not sent back. */
export async function closeBatch({ queue, caller, body }: RouteRequest<CloseBatchBody>): Promise<ClosedBatchAnswer | ClosesAnswer> {
  // As the queue counts a batch (requests.ts batchItems): checked here, before items out of scope are answered without it.
  const count = body.closes.length;
  if (count === 0 || count > MAX_BATCH) throw new RunlogError('InvalidArgument', `closes must hold 1 to ${MAX_BATCH} items, got ${count}`);
  const answers: (BatchAnswer<'entry', Entry> | undefined)[] = [];
  const inScope: LeaseClose[] = [];
  body.closes.forEach(({ lease, request }, i) => {
    const close = { lease, request: itemOf(`closes[${i}]`, () => closeRequestFromJson(request)) };
    try {
      requireLeaseScope(caller, lease);
      inScope.push(close);
      answers.push(undefined);
    } catch (error) {
      if (!(error instanceof RunlogError)) throw error;
      answers.push({ error });
    }
  });
  const closed = inScope.length === 0 ? [] : await queue.closeBatch(inScope);
  let next = 0;
  const all = answers.map((answer) => answer ?? closed[next++]!);
  return body.entries === false ? closesToJson(all) : closedToJson(all);
}

/** Converts one item, its InvalidArgument naming the item. */
function itemOf<T>(name: string, convert: () => T): T {
  try {
    return convert();
  } catch (error) {
    if (error instanceof RunlogError && error.code === 'InvalidArgument')
      throw new RunlogError('InvalidArgument', `${name}: ${error.message}`);
    throw error;
  }
}
