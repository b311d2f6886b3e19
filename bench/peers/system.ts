/** What each system's adapter (runlog.ts, bullmq.ts, graphile.ts) gives the workloads. */
export interface PeerSystem {
  /** Its name in the table. */
  readonly name: string;
  /** A fresh, empty queue for one measurement. */
  open(): Promise<PeerQueue>;
}

export interface PeerQueue {
  /** Adds job `n` (its payload names n); answers when the system says it is added. */
  add(n: number): Promise<void>;
  /** Starts a worker at `concurrency` with a no-op handler; `completed` is called once per job it completes. */
  startWorker(concurrency: number, completed: () => void): Promise<void>;
  /** Adds job `n` and answers once a worker has completed it (a worker must be started). */
  addAndWait(n: number): Promise<void>;
  /** Stops its worker and connections and removes what it wrote. */
  close(): Promise<void>;
}
