/** The Dockerfile as instructions, by stage, for the deploy tests (no Docker engine here to build it). */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));

export interface Instruction {
  keyword: string;
  args: string;
}

/** Each stage's instructions (from its FROM on), continuation lines joined, comments dropped. */
export async function dockerStages(): Promise<Instruction[][]> {
  const text = (await readFile(join(root, 'Dockerfile'), 'utf8')).replace(/\\\n/g, ' ');
  const instructions = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => ({ keyword: line.split(/\s/, 1)[0]!.toUpperCase(), args: line.slice(line.search(/\s/) + 1).trim() }));
  const starts = instructions.flatMap((instruction, index) => (instruction.keyword === 'FROM' ? [index] : []));
  assert.ok(starts.length >= 2, 'a build stage, then the image that runs');
  return starts.map((start, i) => instructions.slice(start, starts[i + 1]));
}

/** The one `keyword` instruction of a stage: its arguments. */
export function single(stage: readonly Instruction[], keyword: string): string {
  const found = stage.filter((instruction) => instruction.keyword === keyword);
  assert.equal(found.length, 1, `one ${keyword} in the stage from ${stage[0]?.args}`);
  return found[0]!.args;
}
