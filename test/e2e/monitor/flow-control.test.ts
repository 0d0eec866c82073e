// Flow control in the monitor (issue 13), in real Chromium through the browser host: a start from
// the start panel with a priority shows it on the instance; an instance held by its workflow's
// concurrency limit says in the list what it waits for, "concurrency limit (1 of 1)"; a priority
// the engine would refuse is named at the panel, and nothing starts.
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
});
