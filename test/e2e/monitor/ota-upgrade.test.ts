// Issue 5's "Done when", end to end in Chromium through the browser host: a new user launches the
// OTA example from the UI for a fleet of ten simulated devices, watches the fleet progress live,
// finds the suspended device through the list's filters, fixes it (the device is repaired; the
// person records the fix by editing the instance's variables) and resumes it to COMPLETED.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { startDeviceServer, type DeviceFleetServer } from '../../../examples/device-server';
import {
  attrOfAll,
  notReloaded,
  openStartPanel,
  rowIdsOnScreen,
  startMonitorApp,
  textOfAll,
  waitText,
  waitUntil,
  type MonitorApp,
} from '../../helpers/monitor-app';

let app: MonitorApp;
let fleet: DeviceFleetServer;

beforeAll(async () => {
  // ten devices: dev-04 is already current, dev-07 bricks (rolled back), dev-10 is flaky (suspends)
  fleet = await startDeviceServer({ size: 10 });
  app = await startMonitorApp({ workflows: ['examples/ota-upgrade.workflow.json'] });
});
afterAll(async () => {
  await app?.close();
  await fleet?.close();
});

const rowIds = () => rowIdsOnScreen(app.page);

describe('Done when: the OTA fleet from the UI', () => {
  it('launch from the UI, watch it live, find the suspended device by filters, fix its variables, resume to COMPLETED', async () => {
    const { page } = app;
    await page.getByTestId('nav-instances').click();
    await page.getByTestId('actor-name').fill('Barbara');
    await page.getByTestId('actor-name').press('Enter');
    await page.getByTestId('workflow-item-ota-upgrade').click();
    await waitText(page.getByTestId('selected-workflow'), 'ota-upgrade');
    await openStartPanel(page);

    // when the user launches one instance per device from the start panel, keyed by device
    const started = new Map<string, number>();
    for (const device of fleet.devices.values()) {
      await page.getByTestId('start-business-key').fill(device.id);
      await page
        .getByTestId('start-vars')
        .fill(
          JSON.stringify({ deviceId: device.id, baseUrl: fleet.baseUrl, targetVersion: fleet.targetVersion }),
        );
      const before = await page
        .getByTestId('start-result')
        .textContent({ timeout: 200 })
        .catch(() => null);
      await page.getByTestId('start-instance').click();
      const text = await waitUntil(
        () => page.getByTestId('start-result').textContent({ timeout: 500 }),
        (t) => t !== null && t !== before,
        `${device.id} to start`,
      );
      started.set(device.id, Number(/#(\d+)/.exec(text ?? '')?.[1]));
    }
    expect(started.size).toBe(10);

    // then the fleet progresses live: statuses change on screen until the counts reach the end state
    const seen = new Map<number, Set<string>>();
    await waitUntil(
      async () => {
        const cells = page.locator('[data-testid^="instance-status-"]');
        const [tids, texts] = await Promise.all([attrOfAll(cells, 'data-testid'), textOfAll(cells)]);
        for (const [i, status] of texts.entries()) {
          const id = Number((tids[i] ?? '').replace('instance-status-', ''));
          seen.set(id, (seen.get(id) ?? new Set()).add(status));
        }
        return Promise.all(
          ['COMPLETED', 'FAILED', 'SUSPENDED'].map((st) =>
            page.getByTestId(`status-chip-${st}`).getAttribute('data-count'),
          ),
        );
      },
      (c) => c.join(',') === '8,1,1',
      'the fleet to end: 8 completed, 1 failed (rolled back), 1 suspended',
      40_000,
    );
    expect([...seen.values()].some((s) => s.has('RUNNING') || s.has('WAITING') || s.has('PENDING'))).toBe(
      true,
    );
    expect(await notReloaded(page)).toBe(true);
    // and a notice told the user a device needs a person
    await waitUntil(
      () => page.locator('[data-testid^="notice-"][data-kind="suspended"]').count(),
      (n) => n >= 1,
      'the suspension notice',
    );

    // when the user filters the list to the ota-upgrade instances waiting for a person
    await page.getByTestId('filter-workflow').selectOption('ota-upgrade');
    await page.getByTestId('filter-waiting').selectOption('person');
    const flaky = started.get('dev-10') ?? 0;
    await waitUntil(rowIds, (ids) => ids.length === 1 && ids[0] === flaky, 'only the flaky device');
    expect(await page.getByTestId(`instance-reason-${flaky}`).textContent()).toMatch(
      /^"verify" failed after 5 attempts: HTTP_ERROR: GET .*\/devices\/dev-10\/health answered 503/,
    );
    expect(await page.getByTestId(`instance-current-${flaky}`).textContent()).toBe('verify');
    expect(await page.getByTestId(`instance-attempt-${flaky}`).textContent()).toBe('5/5');
    // (the same device is found by its key in the search box)
    await page.getByTestId('filter-waiting').selectOption('');
    await page.getByTestId('filter-text').fill('dev-10');
    await waitUntil(rowIds, (ids) => ids.length === 1 && ids[0] === flaky, 'the device by its key');

    // and opens it: the graph shows where it stopped
    await page.getByTestId(`instance-row-${flaky}`).click();
    await waitText(page.getByTestId('detail-status'), 'SUSPENDED');
    expect(await page.getByTestId('graph-node-verify').getAttribute('data-state')).toBe('failed');
    expect(await page.getByTestId('graph-node-settle').getAttribute('data-state')).toBe('completed');

    // when the device is repaired and the user records the fix in its variables, then retries
    fleet.repair('dev-10');
    await page.getByTestId('action-resume').click();
    const vars = JSON.parse(await page.getByTestId('resume-vars').inputValue()) as Record<string, unknown>;
    expect(vars).toMatchObject({ deviceId: 'dev-10', targetVersion: fleet.targetVersion });
    await page
      .getByTestId('resume-vars')
      .fill(JSON.stringify({ ...vars, repair: { by: 'Barbara', note: 'watchdog board replaced' } }, null, 2));
    expect(await page.getByTestId('resume-diff').textContent()).toContain('+ repair:');
    await page.getByTestId('resume-action-retry').check();
    await page.getByTestId('resume-confirm').click();

    // then it runs verify again and reaches COMPLETED, live
    await waitText(page.getByTestId('detail-status'), 'COMPLETED');
    await waitUntil(
      () => page.getByTestId('graph-node-verify').getAttribute('data-state'),
      (s) => s === 'completed',
      'verify to complete',
    );
    const inst = await app.api<Output<'instance:get'>>('instance:get', { id: flaky });
    expect(inst.variables).toMatchObject({
      health: { healthy: true, version: fleet.targetVersion },
      repair: { by: 'Barbara' },
    });
    const history = await app.api<Output<'instance:history'>>('instance:history', { id: flaky });
    expect(history.events.find((e) => e.type === 'instance.resumed')).toMatchObject({
      actor: 'Barbara',
      data: {
        action: 'retry',
        diff: { added: { repair: { by: 'Barbara', note: 'watchdog board replaced' } } },
      },
    });
    // and back in the list, the counts moved: 9 completed, none suspended
    await page.getByTestId('detail-back').click();
    await page.getByTestId('filter-clear').click();
    await waitUntil(
      async () =>
        Promise.all(
          ['COMPLETED', 'SUSPENDED'].map((s) =>
            page.getByTestId(`status-chip-${s}`).getAttribute('data-count'),
          ),
        ),
      (c) => c.join(',') === '9,0',
      '9 completed, 0 suspended',
    );
    expect(await notReloaded(page)).toBe(true);
  });

  it('ran without page errors', () => {
    expect(app.errors).toEqual([]);
  });
});
