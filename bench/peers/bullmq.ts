/** BullMQ on a redis-server of its own (redis-server.ts): a fresh queue name per measurement. */
import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents, Worker, type ConnectionOptions } from 'bullmq';
import type { PeerQueue, PeerSystem } from './system.ts';

export function bullmqSystem(name: string, socket: string): PeerSystem {
  return {
    name,
    async open() {
      const connection: ConnectionOptions = { path: socket, maxRetriesPerRequest: null };
      const queueName = `peers-${randomUUID()}`;
      const events = new QueueEvents(queueName, { connection });
      await events.waitUntilReady();
      const queue = new Queue(queueName, { connection });
      queue.setMaxListeners(0); // each caller waiting in waitUntilFinished listens to it
      return new BullmqQueue(queueName, connection, queue, events);
    },
  };
}

class BullmqQueue implements PeerQueue {
  private worker: Worker | null = null;

  constructor(
    private readonly name: string,
    private readonly connection: ConnectionOptions,
    private readonly queue: Queue,
    private readonly events: QueueEvents,
  ) {}

  async add(n: number): Promise<void> {
    await this.queue.add('noop', { n });
  }

  async startWorker(concurrency: number, completed: () => void): Promise<void> {
    this.worker = new Worker(this.name, async () => undefined, { connection: this.connection, concurrency });
    this.worker.on('completed', completed);
  }

  async addAndWait(n: number): Promise<void> {
    const job = await this.queue.add('noop', { n });
    await job.waitUntilFinished(this.events);
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.events.close();
    await this.queue.obliterate({ force: true });
    await this.queue.close();
  }
}
