/**
 * ISO 8601 date-times with their zone, as the command line takes them (`2026-12-01T06:00:00Z`,
 * `...T07:00+01:00`, seconds and fractions optional). Date.parse alone takes impossible dates
 * and rolls them over (2026-02-30 read as 2026-03-02): each field must read back as written.
 */
const ISO_TIME = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.\d+)?)?(?:Z|([+-])(\d\d):(\d\d))$/;

/** The epoch ms `text` names, or NaN when it is no ISO date-time with its zone or names no real instant. */
export function isoTime(text: string): number {
  const parts = ISO_TIME.exec(text);
  const at = parts === null ? Number.NaN : Date.parse(text);
  if (parts === null || !Number.isFinite(at)) return Number.NaN;
  const [, year, month, day, hour, minute, second, sign, zoneHours, zoneMinutes] = parts;
  const zoneMs = sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(zoneHours) * 60 + Number(zoneMinutes)) * 60_000;
  const written = new Date(at + zoneMs); // its fields in UTC are the fields as written in the zone
  const readsBack =
    written.getUTCFullYear() === Number(year) &&
    written.getUTCMonth() + 1 === Number(month) &&
    written.getUTCDate() === Number(day) &&
    written.getUTCHours() === Number(hour) &&
    written.getUTCMinutes() === Number(minute) &&
    (second === undefined || written.getUTCSeconds() === Number(second));
  return readsBack ? at : Number.NaN;
}
