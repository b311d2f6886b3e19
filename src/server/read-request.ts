/**
 * Reading a request: its JSON body (content type checked, at most `limit` bytes: 413 as soon
 * as more comes, reading no further) and its query (as the route's schema types it).
 */
import type { IncomingMessage } from 'node:http';
import type { TObject, TSchema } from '@sinclair/typebox';
import { RunlogError, invalidArgument } from '../errors.ts';
import { describe } from '../describe.ts';
import { HttpRefusal } from './http-refusal.ts';

/** The body limit for a queue's largest input: base64 makes 3 bytes 4, plus 64 KiB for the rest of the request. */
export function bodyLimitOf(maxInputBytes: number): number {
  return Math.ceil((maxInputBytes * 4) / 3) + 64 * 1024;
}

/** The request's JSON body; an empty body reads as `{}` (a POST whose fields are all optional). */
export async function readJsonBody(request: IncomingMessage, limit: number): Promise<unknown> {
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  const hasBody = declared === undefined ? request.headers['transfer-encoding'] !== undefined : Number(declared) > 0;
  if (hasBody) requireJsonContentType(request.headers['content-type']);
  const bytes = await readBytes(request, limit);
  if (bytes.length === 0) return {};
  let text: string;
  try {
    // Fatal: a byte that is not UTF-8 would otherwise become U+FFFD, silently changing the caller's text.
    text = UTF8.decode(bytes);
  } catch {
    throw invalidArgument(`body is not valid UTF-8 (JSON is UTF-8): ${describe(bytes.subarray(0, 64).toString('latin1'))}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalidArgument(`body is not valid JSON: ${(error as Error).message}`);
  }
}

function readBytes(request: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      request.off('data', onData).pause();
      reject(tooLarge(limit));
    };
    request.on('data', onData);
    request.once('end', () => resolve(Buffer.concat(chunks, size)));
    request.once('error', (error) => reject(request.complete ? error : cutShort(size)));
  });
}

/**
 * A body the client stopped sending (it went away, or its connection broke) is the client's
 * doing, not the server's: refused as a bad request (nobody reads the answer, but the log
 * and the metrics say what happened), never an Internal error with a stack.
 */
function cutShort(size: number): RunlogError {
  return invalidArgument(`body ended after ${size} bytes, before the request was complete (the client went away)`);
}

/**
 * The rest of a body too large is not read: the connection is closed once the refusal is sent
 * (serve-request.ts), and the answer says so. Answered keep-alive, a client sent its next call
 * on the dying socket, which failed ECONNRESET: no answer, for a call the server never saw.
 */
function tooLarge(limit: number): HttpRefusal {
  return new HttpRefusal(413, `body is larger than the limit of ${limit} bytes (from the queue's maxInputBytes)`, { connection: 'close' });
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/** application/json, with no charset or UTF-8's (a body in another encoding would be read as UTF-8 and altered). */
function requireJsonContentType(header: string | undefined): void {
  const type = header?.split(';')[0]!.trim().toLowerCase();
  const charset = header === undefined ? undefined : CHARSET.exec(header)?.[1]!.toLowerCase();
  if (type !== 'application/json') {
    throw new HttpRefusal(415, `content-type must be application/json, got ${describe(header ?? null)}`);
  }
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new HttpRefusal(415, `content-type must name no charset or utf-8 (JSON is UTF-8), got ${describe(header)}`);
  }
}

/**
 * The query as an object the route's schema checks: a parameter the schema types as a number
 * or boolean is converted when it reads as one (else left as text, which the check refuses,
 * naming it); a repeated parameter is an array (refused unless the schema takes one).
 */
export function queryOf(search: URLSearchParams, schema: TObject): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const name of new Set(search.keys())) {
    const values = search.getAll(name).map((text) => typed(text, schema.properties[name]));
    query[name] = values.length === 1 ? values[0] : values;
  }
  return query;
}

function typed(text: string, schema: TSchema | undefined): unknown {
  if ((schema?.type === 'integer' || schema?.type === 'number') && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (schema?.type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}
