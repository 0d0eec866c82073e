// End to end in Chromium through the browser host: the two other choices of a resume by hand
// (DESIGN.md section 4) each end as the design says — skip with a given result completes the step
// with that result and the flow goes on along it; fail compensates the completed steps and ends
// FAILED. A panel left open while someone else acts follows the instance live.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { startFromUi, startMonitorApp, waitText, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

let app: MonitorApp;

beforeAll(async () => {
  app = await startMonitorApp({ workflows: ['test/fixtures/monitor-resume.workflow.json'] });
});
afterAll(async () => {
  await app?.close();
});

async function suspendedInstance(): Promise<number> {
  const { page } = app;
  const id = await startFromUi(app.page, 'monitor-resume', '{}');
  await waitText(page.getByTestId(`instance-status-${id}`), 'SUSPENDED');
  await page.getByTestId(`instance-row-${id}`).click();
  await waitText(page.getByTestId('detail-status'), 'SUSPENDED');
  await page.getByTestId('action-resume').click();
  return id;
}

describe('resume by hand: skip and fail', () => {
  it('skip with a given result: the step completes with it and the flow follows it (hold, not ship), COMPLETED', async () => {
    const { page } = app;
    const id = await suspendedInstance();
    expect(await page.getByTestId('resume-step').textContent()).toBe('check');
    await page.getByTestId('resume-action-skip').check();
    await page.getByTestId('resume-result').fill('{"approved": false, "why": "stock checked by phone"}');
    await page.getByTestId('resume-confirm').click();
    await waitText(page.getByTestId('detail-status'), 'COMPLETED');
    await waitUntil(
      () => page.getByTestId('graph-node-hold').getAttribute('data-state'),
      (s) => s === 'completed',
      'hold to complete',
    );
    expect(await page.getByTestId('graph-node-ship').getAttribute('data-state')).toBe('skipped');
    expect(await page.getByTestId('graph-node-check').getAttribute('data-state')).toBe('completed');
    // the node panel shows the given result as the step's output
    await page.getByTestId('graph-node-check').click();
    await waitUntil(
      () => page.getByTestId('node-output').textContent(),
      (t) => (t ?? '').includes('stock checked by phone'),
      'the given result as output',
    );
    const inst = await app.api<Output<'instance:get'>>('instance:get', { id });
    expect(inst.variables.decision).toEqual({ approved: false, why: 'stock checked by phone' });
    expect(inst.nodes.find((n) => n.id === 'check')?.output).toEqual({
      approved: false,
      why: 'stock checked by phone',
    });
    const history = await app.api<Output<'instance:history'>>('instance:history', { id });
    const types = history.events.map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining(['instance.resumed', 'node.skipped_by_hand', 'instance.completed']),
    );
    expect(history.events.find((e) => e.type === 'instance.resumed')?.actor).toBe('you');
    await page.getByTestId('detail-back').click();
  });

  it('fail by hand: completed steps are compensated and the instance ends FAILED', async () => {
    const { page } = app;
    const id = await suspendedInstance();
    await page.getByTestId('resume-action-fail').check();
    await page.getByTestId('resume-confirm').click();
    await waitText(page.getByTestId('detail-status'), 'FAILED');
    await waitUntil(
      () => page.getByTestId('graph-node-reserve').getAttribute('data-state'),
      (s) => s === 'compensated',
      'reserve to be compensated',
    );
    for (const n of ['ship', 'hold'])
      expect(await page.getByTestId(`graph-node-${n}`).getAttribute('data-ran')).toBe('false');
    const history = await app.api<Output<'instance:history'>>('instance:history', { id });
    expect(history.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['instance.resumed', 'compensation.completed', 'instance.failed']),
    );
    expect(history.events.find((e) => e.type === 'instance.resumed')?.data).toMatchObject({ action: 'fail' });
    // a FAILED instance whose steps were compensated is not offered a retry (the engine refuses
    // one: running on would skip an undone effect), and the page says why
    expect(await page.getByTestId('action-retry').count()).toBe(0);
    expect(await page.getByTestId('retry-not-offered').textContent()).toContain('"reserve" was compensated');
    await page.getByTestId('detail-back').click();
  });

  it('when someone else resumes it meanwhile, the open resume panel follows live and closes: nothing is sent twice', async () => {
    const { page } = app;
    const id = await suspendedInstance();
    await page.getByTestId('resume-action-retry').check();
    // someone else resumes it through the API (what the panel would send carries the version it saw,
    // so a click that raced this would be refused as CONFLICT: see test/unit/renderer/stores/monitor-stores.test.ts)
    const seen = await app.api<Output<'instance:get'>>('instance:get', { id });
    await app.api('instance:resume', {
      id,
      action: 'fail',
      expectedVersion: seen.version,
      actor: 'someone-else',
    });
    await waitText(page.getByTestId('detail-status'), 'FAILED');
    await waitUntil(
      () => page.getByTestId('resume-panel').count(),
      (n) => n === 0,
      'the resume panel to close',
    );
    expect(await page.getByTestId('action-resume').count()).toBe(0);
    const history = await app.api<Output<'instance:history'>>('instance:history', { id });
    expect(history.events.filter((e) => e.type === 'instance.resumed').map((e) => e.actor)).toEqual([
      'someone-else',
    ]);
    // and the same stale resume sent again is refused
    const again = await fetch(`http://127.0.0.1:${app.server.port}/api/instance:resume`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${app.server.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ id, action: 'retry', expectedVersion: seen.version }),
    });
    expect(await again.json()).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
    await page.getByTestId('detail-back').click();
  });

  it('ran without page errors', () => {
    expect(app.errors).toEqual([]);
  });
});
