/**
 * The seams of the service (src/server): who is calling (Caller, from the Authenticator),
 * and where it logs (Logger). The HTTP API, auth, the event stream and `runlog serve` meet here.
 */

/** What a token may do: producers submit, read, cancel and await; workers take and act on leases; admins delete, prune and read the event stream. */
export type Role = 'producer' | 'worker' | 'admin';

export const ROLES: readonly Role[] = ['producer', 'worker', 'admin'];

/** The authenticated caller of one request. */
export interface Caller {
  /** A name for logs (the token's name, never the token); `anonymous` when the server runs without tokens. */
  readonly name: string;
  readonly roles: ReadonlySet<Role>;
  /** The tenants it may touch; 'all' for an unscoped token (and for the loopback-only server without tokens). */
  readonly tenants: ReadonlySet<string> | 'all';
}

/** Turns a request's Authorization header into a Caller, or throws RunlogError `Unauthorized`. */
export interface Authenticator {
  authenticate(authorization: string | undefined): Caller;
  /** False when no tokens are configured: every caller is anonymous with every role (loopback only). */
  readonly required: boolean;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Structured logs: one JSON line per event worth logging (`event` is a stable dotted name, e.g. `http.request`). */
export interface Logger {
  log(level: LogLevel, event: string, fields?: Record<string, unknown>): void;
}
