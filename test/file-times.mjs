// A node:test reporter (test/run-tests.mjs adds it after the spec reporter): once every file has
// run, the slowest test files by the time of their tests (the sum of each file's top-level tests'
// durations: its process start and imports are not counted), and how many seconds all took.
// A test counts under the file that defines it, as node reports it: a shared suite's tests
// (test/contract/*.ts, worker.contract.ts) under that module, over every file that runs it.
// RUNLOG_TEST_TIMES=N lists N files (default 15; 0: none).
import { relative } from 'node:path';

export default async function* fileTimes(source) {
  const byFile = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file !== undefined) {
      byFile.set(event.data.file, (byFile.get(event.data.file) ?? 0) + event.data.details.duration_ms);
    }
  }
  const shown = Number(process.env.RUNLOG_TEST_TIMES ?? 15);
  if (!(shown > 0) || byFile.size === 0) return;
  const slowest = [...byFile].sort((a, b) => b[1] - a[1]).slice(0, shown);
  const total = [...byFile.values()].reduce((sum, ms) => sum + ms, 0);
  yield `\nslowest test files (the time of their tests; ${byFile.size} files, ${(total / 1000).toFixed(0)} s in all):\n`;
  for (const [file, ms] of slowest) yield `${(ms / 1000).toFixed(1).padStart(8)} s  ${relative(process.cwd(), file)}\n`;
}
