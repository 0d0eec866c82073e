import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { validateWorkflow, type TypeCatalog } from '../../../engine/dsl/validate';
import { exportWorkflow } from '../../../engine/dsl/export';
import { parseCron } from '../../../engine/dsl/schedules';
import type { WorkflowInput } from '../../../engine/dsl/schema';

const catalog: TypeCatalog = (type) => (type === 'pass' ? { configSchema: z.object({}).loose() } : undefined);

function workflow(schedules: unknown): WorkflowInput {
  return { name: 'nightly', nodes: [{ id: 'a', type: 'pass' }], schedules } as WorkflowInput;
}

describe('schedules in the DSL', () => {
  it('accepts every field and round-trips through export', () => {
    const given = workflow([
      { id: 'night', cron: '30 2 * * *', timezone: 'Europe/Berlin', vars: { region: 'eu' }, overlap: 'cancel-previous', catchUp: 'latest', paused: true },
      { id: 'every-10s', cron: '*/10 * * * * *' },
    ]);
    const r = validateWorkflow(given, catalog);
    expect(r.problems).toEqual([]);
    if (!r.ok) throw new Error('invalid');
    const again = validateWorkflow(exportWorkflow(r.workflow), catalog);
    expect(again.ok && again.workflow.schedules).toEqual(r.workflow.schedules);
    expect(exportWorkflow(r.workflow).schedules).toEqual((given as { schedules: unknown }).schedules);
  });

  it('names the schedule of a bad cron expression, a bad time zone and a repeated id', () => {
    const r = validateWorkflow(workflow([
      { id: 'a', cron: '61 * * * *' },
      { id: 'b', cron: '0 * * * *', timezone: 'Mars/Olympus' },
      { id: 'a', cron: '* * * * * * *' },
      { id: 'c', cron: '0 0 30 2 *' },
    ]), catalog);
    const byPath = Object.fromEntries(r.problems.map((p) => [p.path.join('.'), p.message]));
    expect(byPath['schedules.0.cron']).toBe('schedules[0].cron: Invalid value for minute: 61 (schedule "a")');
    expect(byPath['schedules.1.timezone']).toMatch(/^schedules\[1\]\.timezone: unknown time zone "Mars\/Olympus"/);
    expect(byPath['schedules.2.id']).toBe('schedules[2].id: "a" is the id of schedules[0] too');
    expect(byPath['schedules.2.cron']).toMatch(/^schedules\[2\]\.cron: a cron expression has 5 fields .* not 7/);
    expect(byPath['schedules.3.cron']).toMatch(/matches no time/);
  });

  it('refuses unknown overlap and catch-up values by field', () => {
    const r = validateWorkflow(workflow([{ id: 'a', cron: '0 * * * *', overlap: 'queue', catchUp: 'some' }]), catalog);
    expect(r.problems.map((p) => p.path.join('.')).sort()).toEqual(['schedules.0.catchUp', 'schedules.0.overlap']);
  });
});

describe('parseCron', () => {
  it('steps Europe/Berlin 02:30 over both daylight-saving changes of 2027 once a day', () => {
    const c = parseCron('30 2 * * *', 'Europe/Berlin');
    // Spring forward: 02:30 does not exist on 28 March; croner fires at 03:00 CEST (01:00 UTC), once.
    expect(c.next(3, Date.parse('2027-03-27T00:00:00Z')).map((t) => new Date(t).toISOString())).toEqual([
      '2027-03-27T01:30:00.000Z', '2027-03-28T01:00:00.000Z', '2027-03-29T00:30:00.000Z',
    ]);
    // Fall back: 02:30 happens twice on 31 October; only the first (CEST) fires.
    expect(c.next(3, Date.parse('2027-10-30T00:00:00Z')).map((t) => new Date(t).toISOString())).toEqual([
      '2027-10-30T00:30:00.000Z', '2027-10-31T00:30:00.000Z', '2027-11-01T01:30:00.000Z',
    ]);
  });

  it('answers the latest due times at or before a time, newest first', () => {
    const c = parseCron('0 * * * *');
    const at = Date.parse('2027-01-01T03:00:00Z');
    expect(c.latest(2, at)).toEqual([at, at - 3_600_000]);
    expect(c.nextAfter(at)).toBe(at + 3_600_000);
  });
});
