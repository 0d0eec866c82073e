// End to end in Chromium through the browser host, at 1280×720: room for an instance's graph.
// Time travel sits at the end of the actions' row (it had a row of its own over the graph), and
// the graph has that height. The OTA example's graph (six nodes in a row, an edge labelled "needs
// the upgrade") opens at a readable size, its start in view and the rest a scroll away (it was
// shrunk to fit: boxes 120 px wide, 7 px titles), and the edge's label sits whole between its
// boxes (it was cut by them).
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstanceDetail, Output } from '../../../engine/api/contract';
import { openFromList, startMonitorApp, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

let app: MonitorApp;
let id = 0;

beforeAll(async () => {
  app = await startMonitorApp({
    workflows: ['examples/ota-upgrade.workflow.json'],
    viewport: { width: 1280, height: 720 },
  });
  // A device address nothing answers: the first step fails and the instance ends FAILED, with a
  // history to scrub through.
  id = (
    await app.api<Output<'instance:start'>>('instance:start', {
      workflow: 'ota-upgrade',
      variables: { deviceId: 'dev-1', baseUrl: 'http://127.0.0.1:9', targetVersion: '2.0.0' },
    })
  ).id;
  await waitUntil(
    () => app.api<InstanceDetail>('instance:get', { id }),
    (d) => d.endedAt !== null,
    'the run to end',
  );
  await openFromList(app.page, id);
  await app.page.getByTestId('graph-node-verify').waitFor();
});
afterAll(async () => {
  await app?.close();
});

type Box = { x: number; y: number; width: number; height: number };

async function box(locator: Locator): Promise<Box> {
  const b = await locator.boundingBox();
  if (!b) throw new Error('not on the page');
  return b;
}

const inside = (inner: Box, outer: Box): boolean =>
  inner.x >= outer.x - 0.5 &&
  inner.y >= outer.y - 0.5 &&
  inner.x + inner.width <= outer.x + outer.width + 0.5 &&
  inner.y + inner.height <= outer.y + outer.height + 0.5;

const overlaps = (a: Box, b: Box): boolean =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** The boxes of the graph's nodes. */
function nodeBoxes(page: Page): Promise<Box[]> {
  return page.locator('[data-testid^="graph-node-"]').evaluateAll((els) =>
    els.map((e) => {
      const r = e.getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height };
    }),
  );
}

describe('an instance at 1280×720', () => {
  it('has time travel in the actions row, and the graph the height its row took', async () => {
    const { page } = app;
    // given: a FAILED instance, open
    expect(await page.getByTestId('instance-detail').getAttribute('data-status')).toBe('FAILED');
    const actions = await box(page.getByTestId('detail-actions'));
    const retry = await box(page.getByTestId('action-retry'));
    const toggle = await box(page.getByTestId('time-travel-toggle'));
    // then: the toggle is in the actions' row, on the line of the Retry button, at its end
    expect(inside(toggle, actions)).toBe(true);
    expect(Math.abs(toggle.y + toggle.height / 2 - (retry.y + retry.height / 2))).toBeLessThan(2);
    expect(toggle.x + toggle.width).toBeGreaterThan(actions.x + actions.width - 2);
    // and the graph follows that row at once (one gap), 350 px high (300 before)
    const graph = await box(page.getByTestId('instance-graph'));
    expect(graph.y - (actions.y + actions.height)).toBeLessThanOrEqual(13);
    expect(graph.height).toBeGreaterThanOrEqual(349);
    await page.screenshot({ path: '/tmp/ui15b-shots/instance-ota-1280.png' });

    // when: time travel is turned on
    await page.getByTestId('time-travel-toggle').click();
    const bar = page.getByTestId('time-travel');
    await bar.waitFor();
    // then: the scrubber is in that row too, its slider wide enough to drag, its buttons whole
    const slider = await box(page.getByTestId('time-travel-slider'));
    expect(inside(slider, await box(page.getByTestId('detail-actions')))).toBe(true);
    expect(slider.width).toBeGreaterThanOrEqual(140);
    for (const t of ['time-travel-prev', 'time-travel-next', 'time-travel-fork', 'time-travel-toggle'])
      expect(inside(await box(page.getByTestId(t)), { x: 280, y: 0, width: 980, height: 720 }), t).toBe(true);
    // and it works: one step back shows the entry before the last
    const last = await waitUntil(
      () => bar.getAttribute('data-position'),
      (v) => v !== null && v !== '',
      'an entry',
    );
    await page.getByTestId('time-travel-prev').click();
    await waitUntil(
      () => bar.getAttribute('data-position'),
      (v) => v === String(Number(last) - 1),
      'the entry before',
    );
    await page.screenshot({ path: '/tmp/ui15b-shots/instance-time-travel-1280.png' });
    await page.getByTestId('time-travel-toggle').click();
    await bar.waitFor({ state: 'detached' });
  });

  it('draws the OTA flow at a readable size, its label whole between the boxes, the rest a scroll away', async () => {
    const { page } = app;
    const graph = await box(page.getByTestId('instance-graph'));
    // then: the nodes are at least 160 px wide (200 px at zoom 0.8; the fit drew them 120 px wide)
    const check = await box(page.getByTestId('graph-node-check'));
    expect(check.width).toBeGreaterThanOrEqual(159);
    // and the flow starts in view: its first two nodes whole
    expect(inside(check, graph)).toBe(true);
    expect(inside(await box(page.getByTestId('graph-node-download')), graph)).toBe(true);
    // and the edge's label is whole in the pane, clear of every node box, its text at least 9 px high
    const label = page.locator('.react-flow__edge-textwrapper', { hasText: 'needs the upgrade' });
    const lb = await box(label);
    expect(inside(lb, graph)).toBe(true);
    for (const n of await nodeBoxes(page)) expect(overlaps(lb, n), JSON.stringify(n)).toBe(false);
    expect((await box(label.locator('text'))).height).toBeGreaterThanOrEqual(9);

    // when: the user scrolls over the graph (a wide flow pans; it is not shrunk)
    expect(inside(await box(page.getByTestId('graph-node-verify')), graph)).toBe(false);
    await page.mouse.move(graph.x + graph.width / 2, graph.y + graph.height / 2);
    await page.mouse.wheel(0, 0);
    for (let k = 0; k < 12; k++) {
      await page.mouse.wheel(200, 0);
      if (inside(await box(page.getByTestId('graph-node-verify')), graph)) break;
    }
    // then: the last node comes into view at the same size
    await waitUntil(
      async () => inside(await box(page.getByTestId('graph-node-verify')), graph),
      (v) => v,
      'the last node in view',
    );
    expect((await box(page.getByTestId('graph-node-verify'))).width).toBeCloseTo(check.width, 0);
    await page.screenshot({ path: '/tmp/ui15b-shots/instance-graph-scrolled-1280.png' });
    expect(app.errors).toEqual([]);
  });

  it('at 1440×900 too, the nodes are readable and the label whole', async () => {
    const { page } = app;
    await page.setViewportSize({ width: 1440, height: 900 });
    try {
      await page.getByTestId('detail-back').click();
      await openFromList(page, id);
      await page.getByTestId('graph-node-verify').waitFor();
      const graph = await box(page.getByTestId('instance-graph'));
      expect((await box(page.getByTestId('graph-node-check'))).width).toBeGreaterThanOrEqual(159);
      const lb = await box(page.locator('.react-flow__edge-textwrapper', { hasText: 'needs the upgrade' }));
      expect(inside(lb, graph)).toBe(true);
      for (const n of await nodeBoxes(page)) expect(overlaps(lb, n)).toBe(false);
      await page.screenshot({ path: '/tmp/ui15b-shots/instance-ota-1440.png' });
      // and time travel's scrubber shares the actions' row there too
      await page.getByTestId('time-travel-toggle').click();
      const slider = await box(page.getByTestId('time-travel-slider'));
      expect(inside(slider, await box(page.getByTestId('detail-actions')))).toBe(true);
      await page.screenshot({ path: '/tmp/ui15b-shots/instance-time-travel-1440.png' });
      await page.getByTestId('time-travel-toggle').click();
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
  });
});
