/**
 * The web console's files (src/server/console/, shipped as they are: no build step): GET
 * /console answers the page, GET /console/{file} its scripts and style sheet. Public: the
 * files hold no data; every API call the page makes carries the token the user gives it.
 * Only the files named here are served (never a path from the request), read once, kept.
 */
import type { ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import { describe } from '../describe.ts';
import { HttpRefusal } from './http-refusal.ts';
import type { RouteRequest } from './route.ts';

const DIR = new URL('./console/', import.meta.url);

const TYPES = { html: 'text/html; charset=utf-8', css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8' } as const;

/** Every file of the console, by name. */
export const CONSOLE_FILES: readonly string[] = [
  'index.html',
  'console.css',
  'main.js',
  'api.js',
  'dom.js',
  'timeline.js',
  'thread.js',
  'agents.js',
  'live.js',
];

/** The page's scripts come from this server only; it calls this server only; nothing may frame it. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

const cache = new Map<string, Promise<Buffer>>();

export async function consolePage(_request: RouteRequest, response: ServerResponse): Promise<void> {
  await send(response, 'index.html');
}

export async function consoleFile({ params }: RouteRequest, response: ServerResponse): Promise<void> {
  const name = params.file!;
  if (name === 'index.html' || !CONSOLE_FILES.includes(name)) {
    throw new HttpRefusal(404, `the console has no file ${describe(name)}`);
  }
  await send(response, name);
}

async function send(response: ServerResponse, name: string): Promise<void> {
  let content = cache.get(name);
  if (content === undefined) {
    content = readFile(new URL(name, DIR));
    cache.set(name, content);
    content.catch(() => cache.delete(name));
  }
  const body = await content;
  const type = TYPES[name.slice(name.lastIndexOf('.') + 1) as keyof typeof TYPES];
  response.writeHead(200, { 'content-type': type, 'content-length': body.length, ...SECURITY_HEADERS });
  response.end(body);
}
