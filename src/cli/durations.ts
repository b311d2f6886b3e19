/** A duration for people: `0 ms`, `850 ms`, `1.234 s`, `4 m 05 s`, `2 h 03 m`, `3 d 04 h`. */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  if (abs < 1_000) return `${sign}${abs} ms`;
  if (abs < 60_000) return `${sign}${(abs / 1_000).toFixed(3)} s`;
  const [big, small, bigUnit, smallUnit, smallPer] =
    abs < 3_600_000
      ? [60_000, 1_000, 'm', 's', 60]
      : abs < 86_400_000
        ? [3_600_000, 60_000, 'h', 'm', 60]
        : [86_400_000, 3_600_000, 'd', 'h', 24];
  const whole = Math.floor(abs / big);
  const rest = Math.floor(abs / small) % smallPer;
  return `${sign}${whole} ${bigUnit} ${String(rest).padStart(2, '0')} ${smallUnit}`;
}
