// Flow control in the monitor (issue 13), in real Chromium through the browser host: a start from
// the start panel with a priority shows it on the instance; an instance held by its workflow's
// concurrency limit says in the list what it waits for, "concurrency limit (1 of 1)"; a priority
// the engine would refuse is named at the panel, and nothing starts. The dashboard lists the
// upcoming scheduled starts of the active schedules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstanceDetail, Output } from '../../../engine/api/contract';
import { openFromList, openStartPanel, startMonitorApp, waitText, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

let app: MonitorApp;

/** One instance at a time, each in a minute's delay: the second one waits for the first. */
const capped = {
  format: 1,
  name: 'capped-one',
  concurrency: { limit: 1 },
  nodes: [{ id: 'wait', type: 'delay', config: { durationMs: 60_000 } }],
};

beforeAll(async () => {
  app = await startMonitorApp({
    prepare: async (engine) => {
      await engine.deploy(capped);
      await engine.deploy({ name: 'nightly-report', nodes: [{ id: 'p', type: 'pass' }], schedules: [{ id: 'at-two', cron: '0 2 * * *' }, { id: 'never', cron: '0 3 * * *', paused: true }] });
    },
  });
});
afterAll(async () => {
  await app?.close();
});

describe('monitor: priority and concurrency limits', () => {
  it('starts with a priority from the panel; a held instance says "concurrency limit (1 of 1)"', async () => {
    const { page } = app;
    // given: one instance in progress, holding the only slot
    const first = (await app.api<Output<'instance:start'>>('instance:start', { workflow: 'capped-one' })).id;
    // when: a second one is started from the start panel with priority 3
    await page.getByTestId('nav-instances').click();
    await page.getByTestId('workflow-item-capped-one').click();
    await waitText(page.getByTestId('selected-workflow'), 'capped-one');
    await openStartPanel(page);
    await page.getByTestId('start-priority').fill('3');
    await page.getByTestId('start-instance').click();
    const text = await waitUntil(() => page.getByTestId('start-result').textContent({ timeout: 500 }), (t) => /#\d+/.test(t ?? ''), 'the start');
    const second = Number(/#(\d+)/.exec(text ?? '')?.[1]);
    expect(second).toBeGreaterThan(first);
    // then: the engine has its priority, it is held, and its row says why
    const detail = await app.api<InstanceDetail>('instance:get', { id: second });
    expect(detail).toMatchObject({ priority: 3, held: true, status: 'PENDING' });
    await waitText(page.getByTestId(`instance-reason-${second}`), 'concurrency limit (1 of 1)');
    // and the instance view shows the priority
    await openFromList(page, second);
    await waitText(page.getByTestId('instance-priority'), 'priority 3');

    // when: a priority out of range is typed
    await page.getByTestId('detail-back').click();
    await openStartPanel(page);
    await page.getByTestId('start-priority').fill('1.5');
    const before = (await app.api<Output<'instance:list'>>('instance:list', { limit: 10 })).items.length;
    await page.getByTestId('start-instance').click();
    // then: the panel names the field and nothing starts
    await waitText(page.getByTestId('start-vars-error'), 'priority: an integer from -1000000 to 1000000');
    expect((await app.api<Output<'instance:list'>>('instance:list', { limit: 10 })).items.length).toBe(before);
  });

  it('the dashboard lists the upcoming scheduled starts of the active schedules', async () => {
    const { page } = app;
    await page.getByTestId('nav-dashboard').click();
    await waitUntil(() => page.getByTestId('dash-upcoming').getAttribute('data-count', { timeout: 500 }), (n) => n === '5', 'five upcoming starts');
    const rows = await page.getByTestId('dash-upcoming').locator('dt').allTextContents();
    expect(rows).toEqual(Array.from({ length: 5 }, () => 'nightly-report · at-two'));
    const first = (await app.api<Output<'schedule:list'>>('schedule:list', { workflow: 'nightly-report' }))[0]!;
    expect(await page.getByTestId('dash-upcoming').locator('dd').first().getAttribute('title')).toBe(formatLocal(first.upcoming[0]!));
  });
});

/** `ms` as the dashboard's formatTimestamp shows it (the page's local time: the test runs in the same zone). */
function formatLocal(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}
