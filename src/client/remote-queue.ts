/** What `connect` answers: a RunQueueApi over HTTP, of a single server (node-queue.ts) or of a cluster (cluster-queue.ts). */
import type { RunQueueApi, Taken, TakeRequest } from '../queue/types.ts';
import type { TakeWait } from './calls.ts';

export type { TakeWait };

export interface RemoteQueue extends RunQueueApi {
  /** The base url of the server connect read first (of a cluster: the first node that answered). */
  readonly url: string;
  /** Leases the best takeable entry; with `wait.waitMs`, waits up to that long for one (a long-poll). */
  take(request: TakeRequest, wait?: TakeWait): Promise<Taken | null>;
}
