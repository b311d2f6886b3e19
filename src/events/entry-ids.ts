/**
 * Ticket (entry) ids.
 *
 * An entry's sequence number counts from 1 per partition and is never reused (the
 * EntriesPruned watermark remembers the highest one issued). Its id is `<partition>-<token>`:
 * the token is the AES-128 encryption, under the partition's ticket key (TicketKeyCreated,
 * 16 random bytes), of one block holding the sequence (8 bytes, big-endian) and 8 zero
 * bytes, written as unpadded base64url (22 characters). So an id tells a caller nothing of
 * the sequence: no tenant can enumerate another's ids or count the tickets issued.
 *
 * Decrypting a token tells an id runlog issued from a forged one without any memory per
 * ticket: the zero bytes come back only for a block this key encrypted (a forgery passes
 * at odds of 2^-64), and the sequence must be one already issued. So after prune and
 * compaction the owner's id still reads TicketExpired while a forged one reads
 * TicketNotFound; the key lives in the log under a key never tombstoned.
 *
 * Logs written before ticket keys hold plain `<partition>-<seq>` ids. Those entries keep
 * their ids, and a plain id reads as issued while its seq is at most the key's
 * `legacyThrough`: the count of plain ids the partition issued, fixed when its key was
 * created, so it tells nothing of later tickets. New logs have no plain ids at all.
 */
import { createCipheriv, createDecipheriv, type Cipher, type Decipher } from 'node:crypto';
import { RunlogError } from '../errors.ts';

export const TICKET_SECRET_BYTES = 16;

/** A ticket id's parts: its partition, and either its token or (a plain legacy id) its seq. */
export type ParsedEntryId = { partition: number; token: string; seq: null } | { partition: number; token: null; seq: number };

/** 16 bytes are 21 base64url characters and 2 bits: the last character is one of AQgw. */
const TOKEN_ID = /^(0|[1-9]\d{0,5})-([A-Za-z0-9_-]{21}[AQgw])$/;
const PLAIN_ID = /^(0|[1-9]\d{0,5})-([1-9]\d{0,15})$/;

/** The id of `seq`: its block from the window (encrypting the next TOKENS_AHEAD blocks when it is past it), or encrypted alone. */
export function formatEntryId(partition: number, seq: number, secret: Uint8Array): string {
  let window = windows.get(secret);
  const at = window === undefined ? -1 : seq - window.first;
  if (window !== undefined && at >= 0 && at < TOKENS_AHEAD) return idOf(partition, window.tokens, at * 16);
  if (window !== undefined && seq < window.first) return idOf(partition, encrypted(seq, 1, secret), 0);
  window = { first: seq, tokens: encrypted(seq, TOKENS_AHEAD, secret) };
  windows.set(secret, window);
  return idOf(partition, window.tokens, 0);
}

const BASE64URL = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', 'latin1');
/** Room for an id: a partition number's digits (a safe integer: at most 16), '-', and a token's 22 characters. */
const idScratch = Buffer.allocUnsafe(64);

/**
 * `<partition>-<token>` of the block at `at` of `tokens`, written into a scratch buffer and read
 * out as one string: a token string joined to its prefix would be a rope, flattened (copied
 * again) the first time the id is hashed or written, and two strings more per submission.
 * The token is the block in unpadded base64url (Buffer's 'base64url', 22 characters).
 */
function idOf(partition: number, tokens: Buffer, at: number): string {
  const prefix = String(partition);
  let pos = 0;
  for (; pos < prefix.length; pos++) idScratch[pos] = prefix.charCodeAt(pos);
  idScratch[pos++] = 0x2d; // '-'
  for (let i = at; i < at + 15; i += 3) {
    const bits = (tokens[i]! << 16) | (tokens[i + 1]! << 8) | tokens[i + 2]!;
    idScratch[pos++] = BASE64URL[bits >>> 18]!;
    idScratch[pos++] = BASE64URL[(bits >>> 12) & 63]!;
    idScratch[pos++] = BASE64URL[(bits >>> 6) & 63]!;
    idScratch[pos++] = BASE64URL[bits & 63]!;
  }
  const last = tokens[at + 15]!;
  idScratch[pos++] = BASE64URL[last >>> 2]!;
  idScratch[pos++] = BASE64URL[(last & 3) << 4]!;
  return idScratch.toString('latin1', 0, pos);
}

/**
 * Blocks encrypted ahead of the next sequence: ids are issued in sequence order, and one
 * update over TOKENS_AHEAD blocks (ECB encrypts each block alone, so the tokens are the same)
 * costs about what two single blocks do. A sequence outside the window (an old entry's id) is
 * encrypted alone, as before.
 */
const TOKENS_AHEAD = 256;

interface Window {
  /** The sequence of the first block of `tokens`. */
  first: number;
  tokens: Buffer;
}

const windows = new WeakMap<Uint8Array, Window>();

/** The blocks of sequences seq, seq + 1, ... (count of them), encrypted under `secret`. */
function encrypted(seq: number, count: number, secret: Uint8Array): Buffer {
  const blocks = Buffer.alloc(16 * count);
  for (let i = 0; i < count; i++) {
    const n = seq + i;
    blocks.writeUInt32BE(Math.floor(n / 2 ** 32), i * 16);
    blocks.writeUInt32BE(n >>> 0, i * 16 + 4);
  }
  return ciphersOf(secret).encrypt.update(blocks);
}

/** The id's parts, or null for anything not shaped like an id runlog issues. */
export function parseEntryId(entryId: unknown, partitions: number): ParsedEntryId | null {
  if (typeof entryId !== 'string') return null;
  const token = TOKEN_ID.exec(entryId);
  if (token !== null) return inRange({ partition: Number(token[1]), token: token[2]!, seq: null }, partitions);
  const plain = PLAIN_ID.exec(entryId);
  if (plain === null || !Number.isSafeInteger(Number(plain[2]))) return null;
  return inRange({ partition: Number(plain[1]), token: null, seq: Number(plain[2]) }, partitions);
}

/** The sequence a token was issued for under `secret`, or null when this key never made it. */
export function sequenceOf(token: string, secret: Uint8Array): number | null {
  const block = ciphersOf(secret).decrypt.update(Buffer.from(token, 'base64url'));
  if (block.length !== 16 || block.readUInt32BE(8) !== 0 || block.readUInt32BE(12) !== 0) return null;
  const seq = block.readUInt32BE(0) * 2 ** 32 + block.readUInt32BE(4);
  return seq >= 1 && Number.isSafeInteger(seq) ? seq : null;
}

/** What a partition's log says of the tickets it issued: its ticket key (null before one) and the highest seq issued. */
export interface IssuedTickets {
  ticketKey: { secret: Uint8Array; legacyThrough: number } | null;
  issuedThrough: number;
}

/**
 * True when `partition` issued `entryId`, by its ticket key and the highest seq it issued (no
 * memory per ticket: see the top). A legacy plain id counts up to the key's legacyThrough (all
 * issued seqs before a key).
 */
export function wasIssued(entryId: string, partition: number, issued: IssuedTickets): boolean {
  const parsed = parseEntryId(entryId, partition + 1);
  if (parsed === null || parsed.partition !== partition) return false;
  const { ticketKey, issuedThrough } = issued;
  const legacyThrough = ticketKey?.legacyThrough ?? issuedThrough;
  if (parsed.token === null) return parsed.seq <= legacyThrough;
  const seq = ticketKey === null ? null : sequenceOf(parsed.token, ticketKey.secret);
  return seq !== null && seq > legacyThrough && seq <= issuedThrough;
}

function inRange(parsed: ParsedEntryId, partitions: number): ParsedEntryId | null {
  return parsed.partition < partitions ? parsed : null;
}

interface Ciphers {
  encrypt: Cipher;
  decrypt: Decipher;
}

/**
 * One ECB cipher each way per key, reused: without padding every 16-byte update answers
 * its block at once, and a cipher object costs far more to set up than a block to encrypt.
 */
const ciphers = new WeakMap<Uint8Array, Ciphers>();

function ciphersOf(secret: Uint8Array): Ciphers {
  let pair = ciphers.get(secret);
  if (pair === undefined) {
    if (secret.length !== TICKET_SECRET_BYTES) {
      throw new RunlogError('Corrupt', `the partition's ticket key is ${secret.length} bytes, expected ${TICKET_SECRET_BYTES}`);
    }
    pair = { encrypt: createCipheriv('aes-128-ecb', secret, null), decrypt: createDecipheriv('aes-128-ecb', secret, null) };
    pair.encrypt.setAutoPadding(false);
    pair.decrypt.setAutoPadding(false);
    ciphers.set(secret, pair);
  }
  return pair;
}
