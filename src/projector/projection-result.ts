/** What a projection run answers (and hands onUpdate as it goes). */
export interface ProjectionResult<S> {
  state: S;
  /** The next offset to fold of each partition run: where a resumed run goes on. */
  position: Map<number, bigint>;
  /** Records this run folded (and skipped as not handled): not counting those a resumed checkpoint covered. */
  folded: number;
  /** Whether this run resumed from a checkpoint. */
  resumed: boolean;
  /** Whether every partition was read up to its end (or `until`) at least once. */
  caughtUp: boolean;
}
