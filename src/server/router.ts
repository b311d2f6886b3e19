/** Finds the route of a request: by path pattern, then method (a known path with another method is 405, with Allow). */
import { invalidArgument } from '../errors.ts';
import { describe } from '../describe.ts';
import type { Route } from './route.ts';

export type Match = { route: Route; params: Record<string, string> } | { noRoute: true } | { allow: string[] };

interface Compiled {
  route: Route;
  pattern: RegExp;
  names: string[];
}

export class Router {
  readonly #compiled: Compiled[];

  constructor(readonly routes: readonly Route[]) {
    this.#compiled = routes.map((route) => ({ route, ...compilePath(route.path) }));
  }

  match(method: string, pathname: string): Match {
    const allow: string[] = [];
    for (const { route, pattern, names } of this.#compiled) {
      const found = pattern.exec(pathname);
      if (found === null) continue;
      if (route.method !== method) {
        allow.push(route.method);
        continue;
      }
      return { route, params: Object.fromEntries(names.map((name, i) => [name, decodeSegment(name, found[i + 1]!)])) };
    }
    return allow.length > 0 ? { allow } : { noRoute: true };
  }
}

/** `/v1/tenants/{tenant}` -> /^\/v1\/tenants\/([^/]+)$/ with names ['tenant']. */
function compilePath(path: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = path
    .split(/(\{[a-zA-Z]+\})/)
    .map((part) => {
      if (!part.startsWith('{')) return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      names.push(part.slice(1, -1));
      return '([^/]+)';
    })
    .join('');
  return { pattern: new RegExp(`^${source}$`), names };
}

function decodeSegment(name: string, segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw invalidArgument(`path.${name} is not a valid percent-encoded path segment, got ${describe(segment)}`);
  }
}
