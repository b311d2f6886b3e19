/**
 * The assignment of the `runlog-sticky` protocol, as a pure function: which member owns which
 * partition of the events topic in the next generation.
 *
 *   balanced       every member gets floor(P/M) or ceil(P/M) partitions
 *   sticky         a partition stays with the member that claims it whenever balance allows;
 *                  the number of partitions that change owner is the least any balanced
 *                  assignment could achieve (the members with the most claims get the larger
 *                  quotas, and each keeps as many of its claims as its quota holds)
 *   deterministic  the result depends only on the claims, not on the members' order: members
 *                  are ordered by their key, contested claims go to the newer generation
 *
 * Sticky matters because a partition that moves is claimed (fencing its writer) and replayed
 * by its new owner: its commands wait meanwhile. Partitions that stay put keep serving through
 * the rebalance.
 */

export interface MemberClaim {
  /** Unique among the members and stable across generations (the node id, then the member id). */
  key: string;
  /** The partitions the member owned in `generation`, as it reports them. */
  owned: readonly number[];
  generation: number;
}

/** The owner of each partition (index = partition), as an index into `members`. */
export function stickyAssignment(partitionCount: number, members: readonly MemberClaim[]): number[] {
  if (members.length === 0) throw new RangeError('a group assignment needs at least one member');
  const order = members.map((_, i) => i).sort((a, b) => compareKeys(members[a]!.key, members[b]!.key));
  const claims = claimsByMember(partitionCount, members, order);
  const quotas = quotasFor(partitionCount, claims, order);
  const owners = new Array<number>(partitionCount).fill(-1);
  for (const i of order) for (const p of claims[i]!.slice(0, quotas[i])) owners[p] = i;
  const free = owners.flatMap((owner, p) => (owner === -1 ? [p] : []));
  for (const i of order) {
    let missing = quotas[i]! - Math.min(claims[i]!.length, quotas[i]!);
    while (missing-- > 0) owners[free.shift()!] = i;
  }
  return owners;
}

/** Each member's uncontested claims, ascending: a partition claimed twice goes to the newer generation, then to the first key. */
function claimsByMember(partitionCount: number, members: readonly MemberClaim[], order: readonly number[]): number[][] {
  const claimant = new Array<number>(partitionCount).fill(-1);
  for (const i of order) {
    for (const p of members[i]!.owned) {
      if (!Number.isInteger(p) || p < 0 || p >= partitionCount) continue;
      const current = claimant[p]!;
      if (current === -1 || members[i]!.generation > members[current]!.generation) claimant[p] = i;
    }
  }
  const claims = members.map((): number[] => []);
  claimant.forEach((i, p) => {
    if (i !== -1) claims[i]!.push(p);
  });
  return claims;
}

/** floor(P/M) each, and the P mod M larger quotas to the members claiming the most (ties: key order). */
function quotasFor(partitionCount: number, claims: readonly number[][], order: readonly number[]): number[] {
  const base = Math.floor(partitionCount / claims.length);
  const extra = partitionCount % claims.length;
  const byClaims = [...order].sort((a, b) => claims[b]!.length - claims[a]!.length);
  const quotas = new Array<number>(claims.length).fill(base);
  for (const i of byClaims.slice(0, extra)) quotas[i] = base + 1;
  return quotas;
}

function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
