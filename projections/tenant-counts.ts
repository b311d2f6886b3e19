/**
 * Open entries per tenant. Reads like a map of the tenants with open entries (a tenant
 * whose count drops to zero is not listed), but keeps one counter per tenant ever seen,
 * so a tenant going between zero and one open entry does not delete and re-add a map key.
 */
interface Counter {
  open: number;
}

export class TenantCounts {
  readonly #counters = new Map<string, Counter>();

  /** The tenant's open entries, or undefined when it has none. */
  get(tenant: string): number | undefined {
    const open = this.#counters.get(tenant)?.open ?? 0;
    return open === 0 ? undefined : open;
  }

  add(tenant: string, delta: number): void {
    const counter = this.#counters.get(tenant);
    if (counter === undefined) this.#counters.set(tenant, { open: delta });
    else counter.open += delta;
  }

  /** [tenant, open] for every tenant with open entries. */
  *[Symbol.iterator](): IterableIterator<[string, number]> {
    for (const [tenant, { open }] of this.#counters) if (open !== 0) yield [tenant, open];
  }
}
