/**
 * The schedule channels over the browser host (a real server and database): list, pause, resume
 * and trigger answer the contract's shapes; an unknown workflow or schedule is NOT_FOUND naming it
 * (`details.workflow` / `details.schedule`); a trigger under `overlap: skip` while the last
 * instance is live is INVALID_STATE with that instance's id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { ManualClock } from '../../../engine/runtime/clock';
import { startTestHost, type TestHost } from '../../helpers/browser-host';

const T0 = Date.parse('2027-06-01T00:00:00Z');

describe('schedule channels', () => {
  let h: TestHost;
  beforeAll(async () => {
    h = await startTestHost({}, { clock: new ManualClock(T0) });
    await h.value('workflow:save', {
      definition: {
        name: 'report',
        nodes: [{ id: 'ok', type: 'approval', config: { prompt: 'send?' } }],
        schedules: [{ id: 'daily', cron: '0 6 * * *', timezone: 'Europe/Berlin', vars: { kind: 'daily' } }],
      },
    });
  });
  afterAll(async () => h.close());

  it('lists, pauses, resumes and triggers', async () => {
    const list = await h.value<Output<'schedule:list'>>('schedule:list', { workflow: 'report' });
    expect(list).toEqual([
      {
        workflow: 'report', id: 'daily', cron: '0 6 * * *', timezone: 'Europe/Berlin', overlap: 'skip', catchUp: 'none', paused: false,
        nextDueAt: Date.parse('2027-06-01T04:00:00Z'),
        upcoming: [1, 2, 3, 4, 5].map((d) => Date.parse(`2027-06-0${d}T04:00:00Z`)),
        lastDueAt: null, lastInstanceId: null,
      },
    ]);
    expect(await h.value('schedule:list')).toEqual(list);
    expect(await h.value<Output<'schedule:pause'>>('schedule:pause', { workflow: 'report', id: 'daily', actor: 'ana' })).toMatchObject({ paused: true, upcoming: [] });
    expect(await h.value<Output<'schedule:resume'>>('schedule:resume', { workflow: 'report', id: 'daily' })).toMatchObject({ paused: false, nextDueAt: Date.parse('2027-06-01T04:00:00Z') });
    const { instance } = await h.value<Output<'schedule:trigger'>>('schedule:trigger', { workflow: 'report', id: 'daily' });
    expect((await h.value<Output<'instance:get'>>('instance:get', { id: instance.id })).businessKey).toBe(`schedule:daily:${new Date(T0).toISOString()}`);
    expect(await h.call('schedule:trigger', { workflow: 'report', id: 'daily' })).toMatchObject({
      ok: false,
      error: { code: 'INVALID_STATE', details: { liveInstanceId: instance.id } },
    });
  });

  it('names an unknown workflow or schedule', async () => {
    for (const channel of ['schedule:pause', 'schedule:resume', 'schedule:trigger']) {
      expect(await h.call(channel, { workflow: 'nope', id: 'daily' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND', message: 'workflow "nope" does not exist', details: { workflow: 'nope' } } });
      expect(await h.call(channel, { workflow: 'report', id: 'weekly' })).toMatchObject({
        ok: false,
        error: { code: 'NOT_FOUND', message: 'workflow "report" has no schedule "weekly" (its schedules: "daily")', details: { workflow: 'report', schedule: 'weekly' } },
      });
    }
    expect(await h.call('schedule:list', { workflow: 'nope' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  });

  it('a save with a bad cron names the schedule', async () => {
    const r = await h.call('workflow:save', { definition: { name: 'bad', nodes: [{ id: 'a', type: 'pass' }], schedules: [{ id: 'x', cron: '0 25 * * *' }] } });
    expect(r).toMatchObject({ ok: false, error: { code: 'INVALID_WORKFLOW' } });
    expect(JSON.stringify(r)).toContain('schedules[0].cron: Invalid value for hour: 25 (schedule \\"x\\")');
  });
});
