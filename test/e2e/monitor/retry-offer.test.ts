// "Retry from the failed node" in real Chromium through the browser host: offered only when the
// engine would accept `instance:retry` (renderer/src/monitor/retry-offer.ts mirrors the engine's
// rule; here the offer is held against the engine's own answer on real instances: the OTA demo's
// bricked device, rolled back by compensation, and a plain failure), put away with the other
// actions while time travel shows the instance as it was, and a refused action leaves the actions'
// row where it was.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstanceDetail, Output, Result } from '../../../engine/api/contract';
import { startDeviceServer, type DeviceFleetServer } from '../../../examples/device-server';
import { openFromList, startMonitorApp, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

let app: MonitorApp;
let fleet: DeviceFleetServer;

const plain = {
  format: 1,
  name: 'fails-plainly',
  nodes: [
    { id: 'prepare', type: 'pass', config: { result: 1 }, output: 'prepared' },
    { id: 'boom', type: 'script', config: { code: 'throw new Error("boom")' }, retry: { maxAttempts: 1 } },
  ],
  edges: [{ from: 'prepare', to: 'boom' }],
};

beforeAll(async () => {
  // dev-07 of the demo fleet bricks: it never comes back after the reboot, and is rolled back
  fleet = await startDeviceServer({ size: 10 });
  app = await startMonitorApp({
    workflows: ['examples/ota-upgrade.workflow.json'],
    prepare: async (engine) => void (await engine.deploy(plain)),
  });
});
afterAll(async () => {
  await app?.close();
  await fleet?.close();
});

/** A contract call's Result as the host answers it (refusals included). */
async function call<T>(channel: string, input: unknown): Promise<Result<T>> {
  const res = await fetch(`http://127.0.0.1:${app.server.port}/api/${channel}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${app.server.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(input),
  });
  return (await res.json()) as Result<T>;
}

const failed = (id: number) =>
  waitUntil(
    () => app.api<InstanceDetail>('instance:get', { id }),
    (d) => d.status === 'FAILED',
    `#${id} to fail`,
    30_000,
  );

/** Whether the open instance offers retry: the button, or the note saying why not (exactly one shows). */
async function offered(page: Page): Promise<boolean> {
  await page.locator('[data-testid="action-retry"], [data-testid="retry-not-offered"]').first().waitFor();
  const button = await page.getByTestId('action-retry').count();
  const note = await page.getByTestId('retry-not-offered').count();
  expect(button + note).toBe(1);
  return button === 1;
}

/** Where an element is on the page, px. */
async function box(page: Page, testId: string): Promise<{ x: number; y: number; width: number; height: number }> {
  const b = await page.getByTestId(testId).boundingBox();
  if (!b) throw new Error(`${testId} is not on screen`);
  return b;
}

describe('monitor: retry offered only when the engine would take it', () => {
  let bricked = 0;
  let refusal: Result<unknown> | undefined;

  it('the OTA device rolled back by compensation: not offered, with the reason; the engine refuses it too', async () => {
    const { page } = app;
    // given: the bricked device's upgrade, ended FAILED with `flash` compensated
    bricked = (
      await app.api<Output<'instance:start'>>('instance:start', {
        workflow: 'ota-upgrade',
        businessKey: 'dev-07',
        variables: { deviceId: 'dev-07', baseUrl: fleet.baseUrl, targetVersion: fleet.targetVersion },
      })
    ).id;
    const done = await failed(bricked);
    expect(done.nodes.find((n) => n.id === 'flash')?.status).toBe('COMPENSATED');

    // when: it is opened in the monitor
    await openFromList(page, bricked);
    // then: retry is not offered, and the row says why
    expect(await offered(page)).toBe(false);
    expect(await page.getByTestId('retry-not-offered').textContent()).toMatch(
      /^Not retried from here: its step "flash" was compensated, and running on would skip its undone effect; start a new instance instead/,
    );
    // and the engine, asked directly, refuses for the same reason
    refusal = await call('instance:retry', { id: bricked });
    expect(refusal).toMatchObject({
      ok: false,
      error: { code: 'INVALID_STATE', message: expect.stringContaining('its step "flash" was compensated') as unknown },
    });
    expect(app.errors).toEqual([]);
  });

  it('a plain failure: offered, put away while time travelling, and the engine takes it', async () => {
    const { page } = app;
    // given: an instance whose one step failed
    const id = (await app.api<Output<'instance:start'>>('instance:start', { workflow: 'fails-plainly' })).id;
    await failed(id);
    await openFromList(page, id);
    expect(await offered(page)).toBe(true);
    const toggle = page.getByTestId('time-travel-toggle');
    expect(await toggle.getAttribute('title')).toMatch(/^Replay the instance's history/);

    // when: time travel is turned on and steps back
    await toggle.click();
    await page.getByTestId('time-travel').waitFor();
    await page.getByTestId('time-travel-prev').click();
    // then: no action is offered, a note says they act on the instance as it is now
    await expect.poll(() => page.getByTestId('actions-time-travel-note').textContent()).toBe(
      'The actions act on the instance as it is now: Back to now to use them.',
    );
    expect(await page.getByTestId('action-retry').count()).toBe(0);
    expect(await page.getByTestId('retry-not-offered').count()).toBe(0);
    // and the toggle, now "Back to now", says what it does
    expect(await toggle.textContent()).toBe('Back to now');
    expect(await toggle.getAttribute('title')).toBe('Leave time travel: show the instance as it is now, with its actions');

    // when: back to now, the retry is offered again
    await toggle.click();
    await expect.poll(() => page.getByTestId('action-retry').count()).toBe(1);
    expect(await page.getByTestId('actions-time-travel-note').count()).toBe(0);
    expect(await toggle.getAttribute('title')).toMatch(/^Replay the instance's history/);

    // when: a retry is refused (the host answers with the engine's refusal above: the instance
    // changed under the person, say), the row keeps its place and height
    const row = await box(page, 'detail-actions');
    const button = await box(page, 'action-retry');
    const travel = await box(page, 'time-travel-toggle');
    await page.route('**/api/instance:retry', (route) => route.fulfill({ json: refusal }));
    await page.getByTestId('action-retry').click();
    await page.getByTestId('action-confirm').click();
    await expect.poll(() => page.getByTestId('action-error').textContent()).toContain('INVALID_STATE: ');
    expect(await box(page, 'detail-actions')).toEqual(row);
    expect(await box(page, 'action-retry')).toEqual(button);
    expect(await box(page, 'time-travel-toggle')).toEqual(travel);
    const error = await box(page, 'action-error');
    expect(error.y).toBeGreaterThanOrEqual(row.y + row.height);

    // when: retried again with the host's own answer, the engine takes it: the step runs again
    await page.unroute('**/api/instance:retry');
    await page.getByTestId('action-retry').click();
    await page.getByTestId('action-confirm').click();
    await waitUntil(
      async () => (await app.api<Output<'instance:history'>>('instance:history', { id })).events,
      (events) => events.some((e) => e.type === 'instance.retried') && events.filter((e) => e.type === 'node.failed' && e.nodeId === 'boom').length === 2,
      'the retry to run boom again',
    );
    await failed(id);
    await expect.poll(() => page.getByTestId('action-error').count()).toBe(0);
    expect(app.errors).toEqual([]);
  });
});
