/**
 * Schedules on real databases (both backends), the clock the test's own (ManualClock): a due time
 * fires once; overlap skip / allow / cancel-previous; catch-up after a 3-hour stop as each mode
 * says; Europe/Berlin's daylight-saving days fire 02:30 once; deploys replace the live set and keep
 * paused flags; pause, resume and trigger; rename and delete take the schedules along.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ManualClock } from '../../../engine/runtime/clock';
import { Engine } from '../../../engine/runtime/engine';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import type { NodeType } from '../../../engine/nodes/types';
import type { WorkflowInput } from '../../../engine/dsl/schema';
import { tempEngine, type TempEngine } from '../../helpers/temp-engine';

const HOUR = 3_600_000;
const T0 = Date.parse('2027-01-01T00:00:00Z');
const iso = (t: number) => new Date(t).toISOString();

/** A workflow whose instances wait for a person (stay live) or pass at once. */
function wf(schedules: unknown, waits = false, name = 'nightly'): WorkflowInput {
  return {
    name,
    nodes: [waits ? { id: 'ok', type: 'approval', config: { prompt: 'go?' } } : { id: 'p', type: 'pass' }],
    schedules,
  } as WorkflowInput;
}

async function keys(t: TempEngine, workflow = 'nightly'): Promise<string[]> {
  const rows = await t.engine.listInstances({ workflow, limit: 1000 });
  return rows.map((r) => r.businessKey ?? '').sort();
}

/** Worker turns, a few ms apart (a launched step's outcome is committed by a later turn). */
async function turns(t: TempEngine, n = 4): Promise<void> {
  for (let i = 0; i < n; i++) {
    await t.engine.tick();
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('schedules', () => {
  let t: TempEngine;
  afterEach(async () => t.close());

  it('fires each due time once, with the schedule and due time in the business key', async () => {
    const clock = new ManualClock(T0 + 10 * 60_000);
    t = tempEngine({ clock });
    await t.engine.deploy(wf([{ id: 'hourly', cron: '0 * * * *', vars: { region: 'eu' } }]));
    const [s] = await t.engine.listSchedules();
    expect(s).toMatchObject({ workflow: 'nightly', id: 'hourly', nextDueAt: T0 + HOUR, paused: false, overlap: 'skip', catchUp: 'none', lastDueAt: null });
    expect(s?.upcoming).toEqual([1, 2, 3, 4, 5].map((h) => T0 + h * HOUR));
    await turns(t);
    expect(await keys(t)).toEqual([]);
    clock.set(T0 + HOUR);
    await turns(t);
    clock.set(T0 + HOUR + 30_000);
    await turns(t);
    expect(await keys(t)).toEqual([`schedule:hourly:${iso(T0 + HOUR)}`]);
    const [inst] = await t.engine.listInstances({ workflow: 'nightly' });
    expect((await t.engine.getInstance(inst!.id)).variables).toMatchObject({ region: 'eu' });
    const created = (await t.engine.history(inst!.id)).find((h) => h.type === 'instance.created');
    expect(created?.actor).toBe('schedule:hourly');
    const [after] = await t.engine.listSchedules('nightly');
    expect(after).toMatchObject({ nextDueAt: T0 + 2 * HOUR, lastDueAt: T0 + HOUR, lastInstanceId: inst!.id });
  });

  it('overlap skip starts nothing while the last instance is live, and records the skip', async () => {
    const clock = new ManualClock(T0);
    t = tempEngine({ clock });
    await t.engine.deploy(wf([{ id: 'h', cron: '0 * * * *', overlap: 'skip' }], true));
    clock.set(T0 + HOUR);
    await turns(t);
    clock.set(T0 + 2 * HOUR);
    await turns(t);
    expect(await keys(t)).toEqual([`schedule:h:${iso(T0 + HOUR)}`]);
    const changes = await t.engine.storage.read.changes({ after: 0, limit: 1000 });
    const skipped = changes.entries.filter((e) => e.type === 'schedule.skipped');
    expect(skipped.map((e) => e.data)).toEqual([expect.objectContaining({ workflow: 'nightly', schedule: 'h', reason: 'overlap', dueAt: [iso(T0 + 2 * HOUR)] })]);
  });

  it('overlap allow runs them side by side; cancel-previous cancels the live one first', async () => {
    const clock = new ManualClock(T0);
    t = tempEngine({ clock });
    await t.engine.deploy(wf([{ id: 'a', cron: '0 * * * *', overlap: 'allow' }], true, 'allowed'));
    await t.engine.deploy(wf([{ id: 'c', cron: '0 * * * *', overlap: 'cancel-previous' }], true, 'cancelling'));
    for (const h of [1, 2, 3]) {
      clock.set(T0 + h * HOUR);
      await turns(t);
    }
    const allowed = await t.engine.listInstances({ workflow: 'allowed' });
    expect(allowed.map((r) => r.status)).toEqual(['WAITING', 'WAITING', 'WAITING']);
    const cancelling = await t.engine.listInstances({ workflow: 'cancelling' });
    expect(cancelling.map((r) => [r.businessKey, r.status])).toEqual([
      [`schedule:c:${iso(T0 + 3 * HOUR)}`, 'WAITING'],
      [`schedule:c:${iso(T0 + 2 * HOUR)}`, 'CANCELLED'],
      [`schedule:c:${iso(T0 + HOUR)}`, 'CANCELLED'],
    ]);
  });

  it.each([
    ['none', []],
    ['latest', [3]],
    ['all', [1, 2, 3]],
  ] as const)('after a 3-hour stop, catchUp %s starts the missed hours %j', async (catchUp, hours) => {
    const clock = new ManualClock(T0 + 60_000);
    t = tempEngine({ clock });
    await t.engine.deploy(wf([{ id: 'h', cron: '0 * * * *', catchUp, overlap: 'allow' }]));
    // No worker ran from 00:01 to 03:20: 01:00, 02:00 and 03:00 were missed.
    clock.set(T0 + 3 * HOUR + 20 * 60_000);
    await turns(t);
    expect(await keys(t)).toEqual(hours.map((h) => `schedule:h:${iso(T0 + h * HOUR)}`).sort());
    const [s] = await t.engine.listSchedules();
    expect(s?.nextDueAt).toBe(T0 + 4 * HOUR);
    const skipped = (await t.engine.storage.read.changes({ after: 0, limit: 100 })).entries.filter((e) => e.type === 'schedule.skipped');
    expect(skipped.map((e) => (e.data as { count: number }).count)).toEqual(hours.length === 3 ? [] : [3 - hours.length]);
  });

  it('catchUp all starts at most 100 missed times, the latest, and records the rest as skipped', async () => {
    const clock = new ManualClock(T0);
    t = tempEngine({ clock });
    await t.engine.deploy(wf([{ id: 'm', cron: '* * * * *', catchUp: 'all', overlap: 'allow' }]));
    clock.set(T0 + 150 * 60_000);
    await turns(t);
    const got = await keys(t);
    expect(got).toHaveLength(100);
    expect(got[0]).toBe(`schedule:m:${iso(T0 + 51 * 60_000)}`);
    expect(got[99]).toBe(`schedule:m:${iso(T0 + 150 * 60_000)}`);
    const skipped = (await t.engine.storage.read.changes({ after: 0, limit: 1000 })).entries.filter((e) => e.type === 'schedule.skipped');
    expect(skipped[0]?.data).toMatchObject({ reason: 'catch-up', count: 1, more: true });
  });

  it.each([
    ['spring forward', '2027-03-28T00:00:00Z', '2027-03-27T23:00:00Z', '2027-03-28T23:00:00Z', ['2027-03-28T01:00:00.000Z']],
    ['fall back', '2027-10-31T00:00:00Z', '2027-10-30T23:00:00Z', '2027-10-31T23:00:00Z', ['2027-10-31T00:30:00.000Z']],
  ])('Europe/Berlin 02:30 fires once on the %s day', async (_day, _label, from, to, expected) => {
    const clock = new ManualClock(Date.parse(from));
    t = tempEngine({ clock });
    await t.engine.deploy(wf([{ id: 'b', cron: '30 2 * * *', timezone: 'Europe/Berlin', overlap: 'allow' }]));
    // Every 5 minutes across the whole local day, a turn each.
    for (let at = Date.parse(from); at <= Date.parse(to); at += 5 * 60_000) {
      clock.set(at);
      await t.engine.tick();
    }
    expect(await keys(t)).toEqual(expected.map((e) => `schedule:b:${e}`));
  });

  it('a deploy replaces the live set: paused flags survive, removed ids go, new ones come', async () => {
    const clock = new ManualClock(T0);
    t = tempEngine({ clock });
    await t.engine.deploy(wf([{ id: 'a', cron: '0 * * * *' }, { id: 'b', cron: '0 0 * * *' }]));
    await t.engine.pauseSchedule('nightly', 'a');
    await t.engine.deploy(wf([{ id: 'a', cron: '30 * * * *' }, { id: 'c', cron: '0 12 * * *', paused: true }]));
    const list = await t.engine.listSchedules('nightly');
    expect(list.map((s) => [s.id, s.cron, s.paused, s.nextDueAt])).toEqual([
      ['a', '30 * * * *', true, T0 + HOUR / 2],
      ['c', '0 12 * * *', true, T0 + 12 * HOUR],
    ]);
    clock.set(T0 + 13 * HOUR);
    await turns(t);
    expect(await keys(t)).toEqual([]);
    await t.engine.resumeSchedule('nightly', 'a');
    const [a] = await t.engine.listSchedules('nightly');
    // Resumed from the next due time after now: the times passed while paused are not caught up.
    expect(a).toMatchObject({ paused: false, nextDueAt: T0 + 13.5 * HOUR });
  });

  it('trigger starts one now under the overlap rule; unknown workflow or schedule is NOT_FOUND', async () => {
    const clock = new ManualClock(T0);
    t = tempEngine({ clock });
    await t.engine.deploy(wf([{ id: 's', cron: '0 0 1 1 *', overlap: 'skip' }], true));
    const id = await t.engine.triggerSchedule('nightly', 's', { actor: 'ana' });
    expect((await t.engine.getInstance(id)).businessKey).toBe(`schedule:s:${iso(T0)}`);
    await expect(t.engine.triggerSchedule('nightly', 's')).rejects.toMatchObject({ code: 'INVALID_STATE', details: { liveInstanceId: id } });
    await expect(t.engine.triggerSchedule('nope', 's')).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'workflow "nope" does not exist' });
    await expect(t.engine.pauseSchedule('nightly', 'x')).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'workflow "nightly" has no schedule "x" (its schedules: "s")' });
    const [s] = await t.engine.listSchedules();
    expect(s).toMatchObject({ nextDueAt: Date.parse('2028-01-01T00:00:00Z'), lastInstanceId: id });
  });

  it('a save refuses vars that the inputSchema refuses, naming the schedule', async () => {
    t = tempEngine({ clock: new ManualClock(T0) });
    const def = { ...wf([{ id: 'eu', cron: '0 * * * *', vars: { region: 'eu' } }, { id: 'none', cron: '0 * * * *' }]), inputSchema: { type: 'object', required: ['region'], properties: { region: { type: 'string' } } } };
    await expect(t.engine.deploy(def)).rejects.toMatchObject({
      code: 'INVALID_WORKFLOW',
      details: [expect.objectContaining({ path: ['schedules', 1, 'vars'], message: expect.stringMatching(/^schedules\[1\]\.vars: .*region.* \(schedule "none"\)$/) })],
    });
    expect(await t.engine.listSchedules()).toEqual([]);
  });

  it('a worker that lacks a node type leaves that schedule to one that has it, and fires the others', async () => {
    const mark: NodeType<Record<string, never>> = {
      type: 'mark', title: 'Mark', description: 'Passes (tests)', icon: 'hash', group: 'Test',
      configSchema: z.strictObject({}),
      execute: () => Promise.resolve({ output: 'marked' }),
    };
    const clock = new ManualClock(T0);
    t = tempEngine({ clock, registry: createDefaultRegistry().register(mark) });
    await t.engine.deploy({ name: 'custom', nodes: [{ id: 'm', type: 'mark' }], schedules: [{ id: 'h', cron: '0 * * * *' }] } as WorkflowInput);
    await t.engine.deploy(wf([{ id: 'h', cron: '0 * * * *' }], false, 'plain'));
    const other = Engine.open(t.file, { clock, pollIntervalMs: 10 });
    try {
      clock.set(T0 + HOUR);
      for (let i = 0; i < 3; i++) await other.tick();
      expect(await keys(t, 'plain')).toEqual([`schedule:h:${iso(T0 + HOUR)}`]);
      expect(await keys(t, 'custom')).toEqual([]);
      await turns(t);
      expect(await keys(t, 'custom')).toEqual([`schedule:h:${iso(T0 + HOUR)}`]);
    } finally {
      await other.close();
    }
  });

  it('rename moves the schedules; delete removes them', async () => {
    const clock = new ManualClock(T0);
    t = tempEngine({ clock });
    await t.engine.deploy(wf([{ id: 'a', cron: '0 * * * *' }]));
    await t.engine.renameWorkflow('nightly', 'hourly');
    expect((await t.engine.listSchedules()).map((s) => s.workflow)).toEqual(['hourly']);
    await t.engine.deleteWorkflow('hourly');
    expect(await t.engine.listSchedules()).toEqual([]);
  });
});
