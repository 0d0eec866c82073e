// End to end in Chromium through the browser host: the per-status counts have one source (issue
// 15, item 6). Instances that go WAITING (a retry's backoff) and then SUSPENDED move the status
// bar, the status chips and the Dashboard's tiles together, within moments, without a reload; the
// Dashboard's "needs a person" counts suspended instances and approvals, not plain timers (item 8).
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { notReloaded, startMonitorApp, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

let app: MonitorApp;

/** Fails after a retry backoff of 2 s, then suspends: RUNNING → WAITING (retry) → SUSPENDED. */
const FLAKY = {
  format: 1,
  name: 'counts-flaky',
  nodes: [
    {
      id: 'call',
      type: 'script',
      config: { code: "throw new Error('the service is down')" },
      retry: { maxAttempts: 2, initialIntervalMs: 2000 },
      onFailure: 'suspend',
    },
  ],
  edges: [],
};
/** WAITING for a timer an hour long: nobody has to do anything. */
const TIMER = { format: 1, name: 'counts-timer', nodes: [{ id: 'sleep', type: 'delay', config: { durationMs: 3_600_000 } }], edges: [] };

beforeAll(async () => {
  app = await startMonitorApp({
    workflows: ['examples/purchase-approval.workflow.json'],
    prepare: async (engine) => {
      await engine.deploy(FLAKY);
      await engine.deploy(TIMER);
    },
  });
});
afterAll(async () => {
  await app?.close();
});

/** The status bar's counts as `{ waiting, suspended }`. */
async function footer(page: Page): Promise<{ waiting: number; suspended: number }> {
  const text = (await page.getByTestId('status-counts').textContent({ timeout: 500 })) ?? '';
  return { waiting: Number(/(\d+) waiting/.exec(text)?.[1]), suspended: Number(/(\d+) suspended/.exec(text)?.[1]) };
}

async function chip(page: Page, status: string): Promise<number> {
  return Number(await page.getByTestId(`status-chip-${status}`).getAttribute('data-count', { timeout: 500 }));
}

describe('per-status counts', () => {
  it('WAITING → SUSPENDED moves the status bar, the chips and the Dashboard together', async () => {
    const { page } = app;
    await page.getByTestId('nav-instances').click();
    // given: one instance waits for a timer, one for an approval, three for a retry's backoff
    await app.api('instance:start', { workflow: 'counts-timer' });
    await app.api('instance:start', { workflow: 'purchase-approval' });
    for (let i = 0; i < 3; i++) await app.api('instance:start', { workflow: 'counts-flaky' });
    await waitUntil(() => footer(page), (f) => f.waiting === 5 && f.suspended === 0, 'the footer to count 5 waiting');
    // when: the three retries fail and suspend their instances (the engine says so)
    await waitUntil(
      () => app.api<Output<'instance:list'>>('instance:list', { status: ['SUSPENDED'], limit: 10 }).then((r) => r.items.length),
      (n) => n === 3,
      'three SUSPENDED instances in the engine',
    );
    const suspendedAt = Date.now();
    // then: within moments the footer and the chips say so, and agree
    await waitUntil(() => footer(page), (f) => f.waiting === 2 && f.suspended === 3, 'the footer to count 2 waiting · 3 suspended', 3000);
    expect(Date.now() - suspendedAt).toBeLessThan(3000);
    await waitUntil(() => chip(page, 'SUSPENDED'), (n) => n === 3, 'the SUSPENDED chip', 3000);
    expect(await chip(page, 'WAITING')).toBe(2);
    expect(await footer(page)).toEqual({ waiting: 2, suspended: 3 });

    // and the Dashboard's tiles show the same numbers; "needs a person" is the 3 suspended and the
    // approval, not the timer
    await page.getByTestId('nav-dashboard').click();
    await waitUntil(() => page.getByTestId('dash-count-SUSPENDED').getAttribute('data-count', { timeout: 500 }), (n) => n === '3', 'the SUSPENDED tile');
    expect(await page.getByTestId('dash-count-WAITING').getAttribute('data-count')).toBe('2');
    await waitUntil(() => page.getByTestId('dash-needs-person').getAttribute('data-count', { timeout: 500 }), (n) => n === '4', '"needs a person" to be 4');
    expect(await page.getByTestId('dash-needs-approvals').textContent()).toBe('1');
    expect(await page.getByTestId('dash-needs-suspended').textContent()).toBe('3');
    expect(await notReloaded(page)).toBe(true);
  });
});
