/** Whether text is well-formed UTF-16: no lone surrogate, so UTF-8 stores it as is. */

/** Whether `text` has no lone UTF-16 surrogate, so UTF-8 stores it as is. */
export function isWellFormed(text: string): boolean {
  // String.prototype.isWellFormed: Node 20+, not yet in TypeScript's ES2022 lib.
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}
