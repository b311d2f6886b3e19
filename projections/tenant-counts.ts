/**
 * Open entries per tenant. Reads like a map of the tenants with open entries (a tenant
 * whose count drops to zero is not listed), but keeps one counter per tenant ever seen,
 * so a tenant going between zero and one open entry does not delete and re-add a map key.
 */
export interface TenantCounter {
  open: number;
}

export class TenantCounts {
  readonly #counters = new Map<string, TenantCounter>();

  /** The tenant's open entries, or undefined when it has none. */
  get(tenant: string): number | undefined {
    const open = this.#counters.get(tenant)?.open ?? 0;
    return open === 0 ? undefined : open;
  }

  /** The tenant's counter, to keep and add to directly (threads do: no lookup per entry). */
  counterOf(tenant: string): TenantCounter {
    let counter = this.#counters.get(tenant);
    if (counter === undefined) {
      counter = { open: 0 };
      this.#counters.set(tenant, counter);
    }
    return counter;
  }

  /** [tenant, open] for every tenant with open entries. */
  *[Symbol.iterator](): IterableIterator<[string, number]> {
    for (const [tenant, { open }] of this.#counters) if (open !== 0) yield [tenant, open];
  }
}
