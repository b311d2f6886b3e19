/**
 * PLAIN OBJECTS WITHOUT AN ALLOCATION SITE: how the objects an entry keeps while it is open
 * are made, and why not by an object literal.
 *
 * V8 watches each object or array literal in the code (its allocation site): once 85% of
 * the objects one made survive a young-generation collection (at one taken while the young
 * generation is at its largest), the literal allocates straight into the old generation
 * from then on ("pretenuring"). Only a full collection finding less than a tenth of the old
 * generation alive undoes that, and a queue holding a ticket index and open entries keeps
 * far more than a tenth alive.
 *
 * An entry's objects live as long as the entry is open, so in a backlog the literals making
 * them are pretenured, rightly. Once the backlog is gone they stay pretenured: every entry's
 * lease, attempts and head item are then made in the old generation, die there, and only a
 * full collection frees them. Worse, a dead object of the old generation still counts as
 * alive in every young collection until then, and so does whatever young object it points
 * to: the head item keeps its entry, the entry its input, lease and attempts, and those are
 * promoted in turn and their literals pretenured too. The Worker at half its maximum rate
 * promoted about 1 MB per young collection this way (about every entry it ran), which set
 * off a full collection every 1-2 s and made its submit-to-handler p99 11-18 ms; with
 * pretenuring off (node --no-allocation-site-pretenuring) the same run promoted 30-40 KB
 * per collection and its p99 was 4.9-5.1 ms (2026-12-07).
 *
 * An object made by `new` has no allocation site, so it is never pretenured: it is promoted
 * only if it really lives through two young collections. Objects an entry keeps while open,
 * and those a take answers with, are made so: by a class where nothing compares them with a
 * literal, and otherwise by a plain constructor (below), whose objects are plain objects, as
 * a literal's are (their prototype is Object.prototype: deep-equal to a literal, printed as
 * one). Arrays likewise: listOf(x), not [x] (a `new Array(n)` has an allocation site too).
 * Made so, the same bench promoted 20-23 KB per young collection and its p99 was 3.8-8.5 ms in
 * 19 runs of 20 (once 22.7 ms, with a full collection: bench/worker.ts prints the account).
 * The odd run was more of the same: in 2 of 20 traced runs V8 had pretenured literals a Worker's
 * run holds until its outcome is durable (its Supervised, the pending close, the run's report),
 * and the window promoted ~230 KB per collection; made by `new` too, 0 of 50 runs since did.
 * The rule: an object that may live until an append is durable is not made by a literal.
 */

/** T with its readonly fields writable: what a plain constructor's `this` is while it sets them. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * A constructor of plain objects from `init`, a `function` (not an arrow: it is called with
 * `new`) setting every field of `this` in one order: `new Made(...)` makes what the literal
 * of those fields would, without the literal's allocation site.
 */
export function plainConstructor<A extends unknown[], T extends object>(
  init: (this: Mutable<T>, ...args: A) => void,
): new (...args: A) => T {
  init.prototype = Object.prototype;
  return init as unknown as new (...args: A) => T;
}

/** Never changed: emptyList copies it. */
const NO_SLOT: readonly unknown[] = Object.freeze([]);

/** A new empty array, as `[]` would be, without the literal's allocation site (for arrays held as long as the objects they hold). */
export function emptyList<T>(): T[] {
  return NO_SLOT.slice() as T[];
}

/** Never changed: listOf copies it (`slice` makes no allocation site, and is several times as fast as Array.of). */
const ONE_SLOT: unknown[] = [undefined];

/** A new array holding `item` alone, as `[item]` would be, without the literal's allocation site. */
export function listOf<T>(item: T): T[] {
  const list = ONE_SLOT.slice() as T[];
  list[0] = item;
  return list;
}
