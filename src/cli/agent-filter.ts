/**
 * `runlog tail --agent`: only the events of entries for that agent. Only a Submitted names
 * the agent, so the filter learns the agent's entry ids from the Submitted events it sees,
 * and first from those before where the tail starts (learnBefore reads each partition from
 * its start up to there: on a long log that takes a while before the first line).
 */
import { decodeEvent } from '../events/codec.ts';
import type { RunlogEvent } from '../events/types.ts';
import type { EventLog } from '../log/event-log.ts';
import type { FollowPlan } from './follow.ts';

export class AgentFilter {
  readonly #entries = new Set<string>();

  constructor(readonly agent: string) {}

  async learnBefore(log: EventLog, plan: FollowPlan): Promise<void> {
    for (const [i, partition] of plan.partitions.entries()) {
      for await (const record of log.read(partition, 0n)) {
        if (record.offset >= plan.from[i]!) break;
        if (record.value !== null) this.matches(decodeEvent(record.value));
      }
    }
  }

  /** Whether `event` is about an entry of the agent (a Submitted of the agent is learned). */
  matches(event: RunlogEvent): boolean {
    if (event.type === 'Submitted') {
      if (event.agent !== this.agent) return false;
      this.#entries.add(event.entryId);
      return true;
    }
    if (event.type === 'EntriesPruned') return event.entryIds.some((id) => this.#entries.has(id));
    return event.entryId !== null && this.#entries.has(event.entryId);
  }
}
