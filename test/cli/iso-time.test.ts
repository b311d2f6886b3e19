/** ISO date-times as the command line reads them (src/cli/iso-time.ts): real instants only. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isoTime } from '../../src/cli/iso-time.ts';

it('reads ISO date-times with their zone as Date.parse does', () => {
  for (const text of [
    '2026-12-01T06:00:00Z',
    '2026-12-01T06:00Z',
    '2026-12-01T06:00:00.123Z',
    '2026-12-01T07:00:00+01:00',
    '2026-11-30T20:30:00-09:30',
    '2024-02-29T23:59:59Z',
    '2026-12-31T23:59:59.999+14:00',
  ])
    assert.equal(isoTime(text), Date.parse(text), text);
});

it('refuses impossible dates and times, which Date.parse rolls over, and anything not ISO with a zone', () => {
  for (const text of [
    '2026-02-30T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '2026-04-31T10:00+02:00',
    '2026-13-01T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-12-00T00:00:00Z',
    '2026-12-01T24:00:00Z',
    '2026-12-01T23:60:00Z',
    '2026-12-01T23:59:60Z',
    '2026-12-01T06:00:00',
    '2026-12-01',
    '2026-12-01 06:00:00Z',
    ' 2026-12-01T06:00:00Z',
    'yesterday',
    '',
  ])
    assert.ok(Number.isNaN(isoTime(text)), text);
});
