/**
 * The peer table: each system's figures per round, the median over rounds, and runlog ÷ each
 * peer, as the median of the per-round ratios (each round measures every system within the
 * same minutes) with their range. Pure: run.ts measures, this formats.
 */
import { median } from '../median.ts';

/** One system's figures in one round (jobs/s). */
export interface RoundFigures {
  enqueue: number;
  drain: number;
  enqueueThenDrain: number;
  closedLoop: number;
}

export const COLUMNS: readonly { key: keyof RoundFigures; title: string }[] = [
  { key: 'enqueue', title: 'enqueue jobs/s' },
  { key: 'drain', title: 'drain jobs/s' },
  { key: 'enqueueThenDrain', title: 'enqueue then drain jobs/s' },
  { key: 'closedLoop', title: 'closed-loop lifecycles/s' },
];

export { median };

export interface Ratio {
  median: number;
  min: number;
  max: number;
}

/** runlog's figure ÷ the peer's, round by round (the arrays are by round, the same length). */
export function ratioOf(runlog: readonly number[], peer: readonly number[]): Ratio {
  if (runlog.length !== peer.length) throw new Error(`${runlog.length} runlog rounds against ${peer.length} of the peer`);
  const ratios = runlog.map((value, round) => value / peer[round]!);
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}

const rate = (value: number): string => Math.round(value).toLocaleString('en-US');
const times = (value: number): string => value.toFixed(2);

function formatRatio(ratio: Ratio, rounds: number): string {
  return rounds === 1 ? times(ratio.median) : `${times(ratio.median)} (${times(ratio.min)}–${times(ratio.max)})`;
}

/** A Markdown table: a row per system (medians), then a row runlog ÷ each peer. `rounds` maps system name to its figures by round; the first is runlog. */
export function peerTable(rounds: ReadonlyMap<string, readonly RoundFigures[]>): string {
  const [runlog, ...peers] = [...rounds.entries()];
  if (runlog === undefined) throw new Error('no systems measured');
  const column = (figures: readonly RoundFigures[], key: keyof RoundFigures): number[] => figures.map((f) => f[key]);
  const rows = [
    ['system', ...COLUMNS.map((c) => c.title)],
    ...[runlog, ...peers].map(([name, figures]) => [name, ...COLUMNS.map((c) => rate(median(column(figures, c.key))))]),
    ...peers.map(([name, figures]) => [
      `runlog ÷ ${name}`,
      ...COLUMNS.map((c) => formatRatio(ratioOf(column(runlog[1], c.key), column(figures, c.key)), figures.length)),
    ]),
  ];
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(rows[0]!), line(rows[0]!.map(() => '---')), ...rows.slice(1).map(line)].join('\n');
}

/** Issue 12's targets: runlog ÷ `peer` at least `atLeast` in each of `keys`; a line each, with met or missed. */
export function targetLines(
  rounds: ReadonlyMap<string, readonly RoundFigures[]>,
  peer: string,
  keys: readonly (keyof RoundFigures)[],
  atLeast: number,
): string[] {
  const [runlog] = [...rounds.values()];
  const theirs = rounds.get(peer);
  if (runlog === undefined || theirs === undefined) throw new Error(`no figures of runlog and ${peer}`);
  return keys.map((key) => {
    const ratio = ratioOf(
      runlog.map((f) => f[key]),
      theirs.map((f) => f[key]),
    ).median;
    const title = COLUMNS.find((c) => c.key === key)!.title;
    return `target: runlog ÷ ${peer}, ${title}, >= ${atLeast}: ${times(ratio)} (${ratio >= atLeast ? 'met' : 'missed'})`;
  });
}
