/**
 * Where a projection's checkpoints are kept: one record per projection name, replaced as the
 * run goes on. Backends: memory (this file), a file beside the embedded log
 * (file-checkpoints.ts), a compacted topic beside the Kafka topic (kafka-checkpoints.ts).
 */
export interface CheckpointStore {
  /** The log the checkpoints belong to (file log: its id; Kafka: its topic; memory: 'memory'). A checkpoint of another is not resumed. */
  readonly logId: string;
  /** The latest checkpoint saved under `name`, or null. */
  load(name: string): Promise<Uint8Array | null>;
  /** Replaces the checkpoint under `name` (durably: fsync'd, acknowledged by every in-sync replica). */
  save(name: string, bytes: Uint8Array): Promise<void>;
  /** Removes the checkpoint under `name`, if any. */
  remove(name: string): Promise<void>;
  /** Lets go of files and connections. Idempotent. */
  close(): Promise<void>;
}

/** Checkpoints in this process's memory: for tests, and for a memory log (whose records go with the process too). */
export function memoryCheckpoints(): CheckpointStore {
  const saved = new Map<string, Uint8Array>();
  return {
    logId: 'memory',
    load: async (name) => saved.get(name)?.slice() ?? null,
    save: async (name, bytes) => void saved.set(name, bytes.slice()),
    remove: async (name) => void saved.delete(name),
    close: async () => {},
  };
}
