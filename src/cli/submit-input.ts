/** What `runlog submit` reads from its flags: the input (text, a file, or stdin), times and metadata. */
import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { UsageError, type OptionValues } from './command.ts';
import { isoTime } from './iso-time.ts';
import { listOption, stringOption } from './options.ts';

/** The input bytes: exactly one of --input TEXT and --input-file PATH (`-`: stdin). */
export async function inputOf(values: OptionValues, stdin: Readable): Promise<Uint8Array> {
  const text = stringOption(values, 'input');
  const path = stringOption(values, 'input-file');
  if (text !== undefined && path !== undefined) throw new UsageError('give the input once: --input TEXT or --input-file PATH, not both');
  if (text !== undefined) return Buffer.from(text, 'utf8');
  if (path === undefined) throw new UsageError('submit needs an input: --input TEXT, or --input-file PATH (- reads stdin)');
  if (path === '-') return readAll(stdin);
  try {
    return await readFile(path);
  } catch (error) {
    throw new UsageError(`--input-file ${JSON.stringify(path)} cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

async function readAll(stream: Readable): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A time by the caller's wall clock, epoch ms: epoch ms digits, an ISO 8601 date-time with
 * its zone (`2026-12-01T06:00:00Z`, `...+01:00`), or `+N<unit>` from now (ms, s, m, h, d).
 */
export function timeOption(values: OptionValues, name: string, now: () => number): number | undefined {
  const text = stringOption(values, name);
  if (text === undefined) return undefined;
  const relative = /^\+(\d{1,12})(ms|s|m|h|d)$/.exec(text);
  let at = Number.NaN;
  if (/^\d{1,16}$/.test(text)) at = Number(text);
  else if (relative) at = now() + Number(relative[1]) * UNIT_MS[relative[2]!]!;
  else at = isoTime(text);
  if (!Number.isSafeInteger(at)) {
    throw new UsageError(
      `--${name} must be epoch ms, an ISO date-time with its zone (2026-12-01T06:00:00Z) or +N(ms|s|m|h|d) from now, got ${JSON.stringify(text)}`,
    );
  }
  return at;
}

/** --metadata k=v, repeatable; each key once. */
export function metadataOf(values: OptionValues): Record<string, string> | undefined {
  const pairs = listOption(values, 'metadata');
  if (pairs.length === 0) return undefined;
  const metadata: Record<string, string> = {};
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new UsageError(`--metadata must be KEY=VALUE, got ${JSON.stringify(pair)}`);
    const key = pair.slice(0, equals);
    if (Object.hasOwn(metadata, key)) throw new UsageError(`--metadata names ${JSON.stringify(key)} twice`);
    metadata[key] = pair.slice(equals + 1);
  }
  return metadata;
}
