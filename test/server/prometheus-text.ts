/** A reader of Prometheus text format 0.0.4, enough for tests: samples with labels, HELP and TYPE by family. */
import assert from 'node:assert/strict';

export interface Sample {
  name: string;
  /** The metric family: the name without a histogram's _bucket, _sum or _count. */
  family: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  values: Sample[];
  help: Map<string, string>;
  type: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parsePrometheus(text: string): Scrape {
  const scrape: Scrape = { values: [], help: new Map(), type: new Map() };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const comment = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (comment) {
      (comment[1] === 'HELP' ? scrape.help : scrape.type).set(comment[2]!, comment[3]!);
      continue;
    }
    const match = SAMPLE.exec(line);
    assert.ok(match, `not a Prometheus sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL))
      labels[key!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const name = match[1]!;
    const family = scrape.type.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    scrape.values.push({ name, family, labels, value: Number(match[3]) });
  }
  return scrape;
}

/** The value of the one sample of `name` whose labels include `labels` (exactly one must match). */
export function sampleOf(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  const found = scrape.values.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.equal(found.length, 1, `${name} ${JSON.stringify(labels)}: ${found.length} samples`);
  return found[0]!.value;
}
