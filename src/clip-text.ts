/**
 * Cutting text to a bound. A JS string is UTF-16: a character outside the Basic
 * Multilingual Plane (an emoji) is two code units, a surrogate pair. A cut between them
 * leaves a lone surrogate, which UTF-8 cannot store, so the queue refuses the text; so the
 * cut moves back by one unit rather than split a pair.
 */

/** `text` if it has at most `maxChars` UTF-16 code units; otherwise its start and "…", at most `maxChars` in all. */
export function clipText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = Math.max(0, maxChars - 1);
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
  return `${text.slice(0, end)}…`;
}

/** `text` with each lone UTF-16 surrogate replaced by U+FFFD, so UTF-8 can store it (what a UTF-8 encoder would write). */
export function toWellFormed(text: string): string {
  // String.prototype.toWellFormed: Node 20+, not yet in TypeScript's ES2022 lib.
  return (text as unknown as { toWellFormed(): string }).toWellFormed();
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}
