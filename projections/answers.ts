/**
 * The answers a partition gave to requests of the commands topic (CommandAnswered events),
 * by (tenant, request id): what makes a repeated request get its first answer again.
 *
 * An answer naming an entry of its tenant when it is folded is the entry's: it goes when the
 * entry is pruned (its record r/<tenant>/<requestId> is tombstoned with the entry's). An answer
 * naming none (a refusal of a submit, a cancel of an unknown ticket) is loose: it goes once
 * it is older than the ticket lifetime (Prune tombstones it), counted from its latest answer.
 *
 * Kept so that a compacted log, which holds only the latest CommandAnswered of each request,
 * replays to the same answers: the first answer's fields stay (repeats copy them anyway),
 * `at` is the latest answer's, and loose answers are ordered by their latest answer.
 */
import type { AnsweredCommand, CommandAnswered } from '../src/events/types.ts';
import { answerKey } from '../src/events/keys.ts';

export interface Answer {
  readonly key: string;
  readonly command: AnsweredCommand;
  readonly entryId: string | null;
  readonly code: string | null;
  readonly message: string | null;
  /** When it was last answered (store clock). */
  at: number;
  /** The entry it belongs to (pruned with it), or null: loose. */
  readonly owner: string | null;
}

export class Answers {
  readonly #byKey = new Map<string, Answer>();
  /** Loose answers, oldest latest answer first (a Map keeps insertion order; a repeat moves to the end). */
  readonly #loose = new Map<string, Answer>();
  readonly #byEntry = new Map<string, string[]>();

  get size(): number {
    return this.#byKey.size;
  }

  of(tenant: string, requestId: string): Answer | undefined {
    return this.#byKey.get(answerKey(tenant, requestId));
  }

  /** Folds an answer; `ownedBy`: whether the entry it names is one of its tenant's now. */
  fold(event: CommandAnswered, ownedBy: (entryId: string, tenant: string) => boolean): void {
    const key = answerKey(event.tenant, event.requestId);
    const known = this.#byKey.get(key);
    if (known !== undefined) {
      known.at = event.at;
      if (known.owner === null) {
        this.#loose.delete(key);
        this.#loose.set(key, known); // to the end: the order is by latest answer
      }
      return;
    }
    const owner = event.entryId !== null && ownedBy(event.entryId, event.tenant) ? event.entryId : null;
    const { command, entryId, code, message, at } = event;
    const answer: Answer = { key, command, entryId, code, message, at, owner };
    this.#byKey.set(key, answer);
    if (owner === null) this.#loose.set(key, answer);
    else this.#byEntry.set(owner, [...(this.#byEntry.get(owner) ?? []), key]);
  }

  /** The keys of the answers belonging to `entryId` (tombstoned with it). */
  keysOf(entryId: string): readonly string[] {
    return this.#byEntry.get(entryId) ?? [];
  }

  /** The entry was pruned: its answers go with it. */
  entryRemoved(entryId: string): void {
    for (const key of this.keysOf(entryId)) this.#byKey.delete(key);
    this.#byEntry.delete(entryId);
  }

  /** A tombstone of an answer's record. */
  remove(key: string): void {
    const answer = this.#byKey.get(key);
    if (answer === undefined) return;
    this.#byKey.delete(key);
    this.#loose.delete(key);
    if (answer.owner !== null) {
      const rest = this.keysOf(answer.owner).filter((k) => k !== key);
      if (rest.length === 0) this.#byEntry.delete(answer.owner);
      else this.#byEntry.set(answer.owner, rest);
    }
  }

  /** Keys of loose answers last answered at or before `answeredBy`, oldest first, at most `limit`. */
  looseDue(answeredBy: number, limit: number): string[] {
    const due: string[] = [];
    for (const answer of this.#loose.values()) {
      if (due.length >= limit || answer.at > answeredBy) break;
      due.push(answer.key);
    }
    return due;
  }

  /** Every answer, for comparing views (tests). */
  all(): Answer[] {
    return [...this.#byKey.values()];
  }
}
