/**
 * The catch-up rule of a due schedule (engine/runtime/schedules.ts planDue): due times passed
 * under 60 s ago are on time and always fire; missed ones by `catchUp`; `all` bounded at 100.
 */
import { describe, expect, it } from 'vitest';
import { parseCron } from '../../../engine/dsl/schedules';
import { planDue, scheduleBusinessKey } from '../../../engine/runtime/schedules';

const HOUR = 3_600_000;
const T0 = Date.parse('2027-01-01T00:00:00Z');
const hourly = parseCron('0 * * * *');

describe('planDue', () => {
  it('fires an on-time due time whatever catchUp says, and moves on to the next', () => {
    for (const mode of ['none', 'latest', 'all'] as const) {
      expect(planDue(hourly, mode, T0 + HOUR, T0 + HOUR + 5000)).toEqual({ fire: [T0 + HOUR], skipped: [], more: false, next: T0 + 2 * HOUR });
    }
  });

  it('after a stop: none skips the missed, latest fires the most recent, all fires each oldest first', () => {
    const now = T0 + 3 * HOUR + 20 * 60_000;
    expect(planDue(hourly, 'none', T0 + HOUR, now)).toMatchObject({ fire: [], skipped: [T0 + 3 * HOUR, T0 + 2 * HOUR, T0 + HOUR], next: T0 + 4 * HOUR });
    expect(planDue(hourly, 'latest', T0 + HOUR, now)).toMatchObject({ fire: [T0 + 3 * HOUR], skipped: [T0 + 2 * HOUR, T0 + HOUR] });
    expect(planDue(hourly, 'all', T0 + HOUR, now)).toMatchObject({ fire: [T0 + HOUR, T0 + 2 * HOUR, T0 + 3 * HOUR], skipped: [] });
  });

  it('latest with an on-time time fires that one only', () => {
    const r = planDue(hourly, 'latest', T0 + HOUR, T0 + 3 * HOUR + 10_000);
    expect(r).toMatchObject({ fire: [T0 + 3 * HOUR], skipped: [T0 + 2 * HOUR, T0 + HOUR] });
  });

  it('all stops at 100 due times, the latest, and says more were missed', () => {
    const minutely = parseCron('* * * * *');
    const r = planDue(minutely, 'all', T0, T0 + 500 * 60_000);
    expect(r.fire).toHaveLength(100);
    expect(r.fire[0]).toBe(T0 + 401 * 60_000);
    expect(r.fire[99]).toBe(T0 + 500 * 60_000);
    expect(r).toMatchObject({ skipped: [T0 + 400 * 60_000], more: true });
  });

  it('names the instance by schedule and due time', () => {
    expect(scheduleBusinessKey('nightly', T0)).toBe('schedule:nightly:2027-01-01T00:00:00.000Z');
  });
});
