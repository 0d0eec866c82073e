// The instance view in Chromium through the browser host (issue 15, item 10): an attempt a time
// limit stopped (its recorded error is TIMEOUT) is shown as timed out, and the timeline's axis
// labels never overlap: fewer ticks, at round steps, on a narrower chart.
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFromList, startMonitorApp, waitText, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

let app: MonitorApp;
let id = 0;

beforeAll(async () => {
  app = await startMonitorApp({ workflows: ['test/fixtures/monitor-timeout.workflow.json'], viewport: { width: 1280, height: 720 } });
  id = (await app.api<{ id: number }>('instance:start', { workflow: 'monitor-timeout' })).id;
  await waitUntil(() => app.api<{ status: string }>('instance:get', { id }), (d) => d.status === 'FAILED', 'the instance to fail');
  await openFromList(app.page, id);
});
afterAll(async () => {
  await app?.close();
});

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The boxes of the timeline's axis labels (the `+…` ticks along its top), left to right. */
async function axisLabels(page: Page): Promise<Array<{ text: string; box: Box }>> {
  const ticks: Locator = page.getByTestId('gantt').locator('svg > g > text.gantt-tick');
  const out: Array<{ text: string; box: Box }> = [];
  for (const t of await ticks.all()) {
    const text = (await t.textContent()) ?? '';
    const box = await t.boundingBox();
    if (text.startsWith('+') && box) out.push({ text, box });
  }
  return out.sort((a, b) => a.box.x - b.box.x);
}

describe('attempts and the timeline', () => {
  it('shows an attempt stopped by its time limit as timed out', async () => {
    const { page } = app;
    await page.getByTestId('graph-node-spin').click();
    await waitUntil(() => page.getByTestId('node-panel').getAttribute('data-node'), (n) => n === 'spin', 'the panel of spin');
    // both attempts hit the script's time limit: each carries the badge
    await waitText(page.getByTestId('attempt-timed-out-1'), 'timed out');
    await waitText(page.getByTestId('attempt-timed-out-2'), 'timed out');
    expect(await page.getByTestId('node-attempts').textContent()).toMatch(/#1\s*timed out\s*failed, retrying.*#2\s*timed out\s*failed/s);
    // and the node's error says so
    expect(await page.getByTestId('node-error').textContent()).toMatch(/^failed \(timed out\): TIMEOUT/);
    // while the completed delay's attempt has none
    await page.getByTestId('graph-node-slow').click();
    await waitUntil(() => page.getByTestId('node-panel').getAttribute('data-node'), (n) => n === 'slow', 'the panel of slow');
    expect(await page.locator('[data-testid^="attempt-timed-out-"]').count()).toBe(0);
  });

  it('keeps the axis labels apart at any width, with fewer ticks on a narrower chart', async () => {
    const { page } = app;
    const counts: number[] = [];
    for (const width of [1440, 1100, 860, 720]) {
      await page.setViewportSize({ width, height: 720 });
      await page.waitForTimeout(250);
      const labels = await axisLabels(page);
      expect(labels.length, `labels at ${width}`).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < labels.length; i++) {
        const a = labels[i - 1]?.box;
        const b = labels[i]?.box;
        if (!a || !b) continue;
        expect(a.x + a.width, `"${labels[i - 1]?.text}" runs into "${labels[i]?.text}" at ${width}`).toBeLessThanOrEqual(b.x);
      }
      const svg = await page.getByTestId('gantt').locator('svg').boundingBox();
      const last = labels[labels.length - 1]?.box;
      if (svg && last) expect(last.x + last.width).toBeLessThanOrEqual(svg.x + svg.width);
      counts.push(labels.length);
    }
    expect(counts[3]).toBeLessThan(counts[0] ?? 0);
    await page.setViewportSize({ width: 1280, height: 720 });
    expect(app.errors).toEqual([]);
  });
});
