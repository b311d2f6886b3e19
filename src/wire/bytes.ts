/** Bytes in JSON: standard base64 with padding, checked strictly (a malformed string is InvalidArgument naming the field). */
import { invalidArgument } from '../errors.ts';
import { describe } from '../describe.ts';

export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * The bytes `text` encodes; `name` is the field, for the message (`body.input`). Node's
 * decoder skips what is not base64, so the check is that the bytes encode back to `text`
 * (native, linear: a regular expression took ~1 s per 4 MB).
 */
export function fromBase64(name: string, text: string): Uint8Array {
  const buffer = Buffer.from(text, 'base64');
  if (buffer.toString('base64') !== text) throw invalidArgument(`${name} must be standard base64 with padding, got ${describe(text)}`);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}
