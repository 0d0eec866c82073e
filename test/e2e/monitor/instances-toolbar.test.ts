// End to end in Chromium through the browser host: the Instances view's status chips and bulk
// actions share one line at 1280×720 (they took three: the chips wrapped to two lines and the bulk
// actions had a row of their own), so the table keeps those rows. Every chip and bulk button keeps
// its test id and its accessible name: a chip without room for its word draws its dot and count,
// and the bulk actions sit behind one "Bulk actions" button whose panel opens over the table.
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INSTANCE_STATUS_VALUES } from '../../../engine/api/contract';
import { insertManyInstances } from '../../helpers/many-instances';
import { ROOT, startMonitorApp, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

const N = 20_000;
let app: MonitorApp;
let counts: Record<string, number> = {};

beforeAll(async () => {
  const wf = JSON.parse(fs.readFileSync(path.join(ROOT, 'examples/ota-upgrade.workflow.json'), 'utf8')) as {
    nodes: { id: string }[];
  };
  app = await startMonitorApp({
    workflows: ['examples/ota-upgrade.workflow.json'],
    viewport: { width: 1280, height: 720 },
    hostWorker: false,
    prepare: async (engine) => {
      const id = (await engine.listWorkflows())[0]?.latestId ?? 0;
      counts = insertManyInstances(engine.db.raw, {
        workflowId: id,
        nodeIds: wf.nodes.map((n) => n.id),
        count: N,
      });
    },
  });
  await app.page.getByTestId('nav-instances').click();
  await app.page.getByTestId(`instance-row-${N}`).waitFor();
  await waitUntil(
    () => app.page.getByTestId('status-chip-all').getAttribute('data-count'),
    (c) => c === String(N),
    'the counts',
  );
}, 120_000);
afterAll(async () => {
  await app?.close();
});

/** Rows whose whole box is inside the table's scrolling viewport. */
async function rowsFullyVisible(page: Page): Promise<number> {
  const view = await page.getByTestId('instances-rows').boundingBox();
  if (!view) throw new Error('no table');
  return page.locator('[data-testid^="instance-row-"]').evaluateAll(
    (rows, v) =>
      rows.filter((r) => {
        const b = r.getBoundingClientRect();
        return b.top >= v.y - 0.5 && b.bottom <= v.y + v.height + 0.5;
      }).length,
    view,
  );
}

/** The test id of every control of the chips' line. */
const CONTROLS = [
  'status-chip-all',
  ...INSTANCE_STATUS_VALUES.map((s) => `status-chip-${s}`),
  'filter-paused',
  'filter-test',
  'bulk-menu',
];

/** The bulk actions' test ids, in the panel the bulk button opens. */
const BULK = ['bulk-retry', 'bulk-cancel', 'bulk-pause', 'bulk-unpause'];

/** The accessible name each control had before: what a screen reader says and getByRole finds. */
function names(): Record<string, string> {
  const fmt = (n: number): string => n.toLocaleString('en-US');
  return {
    'status-chip-all': `All ${fmt(N)}`,
    ...Object.fromEntries(
      INSTANCE_STATUS_VALUES.map((s) => [`status-chip-${s}`, `${s.toLowerCase()} ${fmt(counts[s] ?? 0)}`]),
    ),
    'filter-paused': 'paused',
    'filter-test': 'test runs',
    'bulk-retry': 'Retry failed…',
    'bulk-cancel': 'Cancel live…',
    'bulk-pause': 'Pause live…',
    'bulk-unpause': 'Unpause…',
  };
}

describe('the Instances view at 1280×720', () => {
  it('puts the status chips and the bulk actions on one line, each control with its test id and name', async () => {
    const { page } = app;
    // given: 20,000 instances, counts of four and five digits
    expect(counts.COMPLETED).toBe(14_000);
    const row = await page.locator('.chips-row').boundingBox();
    if (!row) throw new Error('no chips row');
    // then: the filters take two lines (they took three), and the date fields show whole
    const filters = await page.getByRole('search', { name: 'Filter instances' }).boundingBox();
    expect(filters?.height).toBeLessThanOrEqual(84);
    for (const id of ['filter-from', 'filter-to'])
      expect(await page.getByTestId(id).evaluate((e) => e.scrollWidth <= e.clientWidth), id).toBe(true);
    // and the chips' row is one line (about 24 px; two lines were over 50)
    expect(row.height).toBeLessThanOrEqual(32);
    // and every control is in it, whole, inside the view's width
    for (const id of CONTROLS) {
      const b = await page.getByTestId(id).boundingBox();
      expect(b, id).not.toBeNull();
      if (!b) continue;
      expect(b.y, id).toBeGreaterThanOrEqual(row.y - 0.5);
      expect(b.y + b.height, id).toBeLessThanOrEqual(row.y + row.height + 0.5);
      expect(b.x + b.width, id).toBeLessThanOrEqual(1280);
      expect(b.width, id).toBeGreaterThan(12);
    }
    // when: the user opens the bulk actions, they show in a panel under the button, whole on screen
    await page.getByTestId('bulk-menu').click();
    expect(await page.getByTestId('bulk-menu').getAttribute('aria-expanded')).toBe('true');
    for (const id of BULK) {
      const b = await page.getByTestId(id).boundingBox();
      expect(b && b.y > row.y + row.height && b.x >= 280 && b.x + b.width <= 1280, id).toBe(true);
    }
    // and each control is found by the name it had (the words a compact chip does not draw are still read)
    for (const [id, name] of Object.entries(names())) {
      const found = page.getByRole('button', { name, exact: true });
      expect(await found.count(), name).toBe(1);
      expect(await found.getAttribute('data-testid'), name).toBe(id);
    }
    await page.screenshot({ path: '/tmp/ui15b-shots/instances-bulk-panel-1280.png' });
    // when: Escape closes it; the table shows eleven whole rows (nine did under three lines of
    // chips and bulk actions)
    await page.keyboard.press('Escape');
    await page.getByTestId('bulk-panel').waitFor({ state: 'detached' });
    expect(await rowsFullyVisible(page)).toBeGreaterThanOrEqual(11);
    // and the chip of a status filtered on shows its word again
    await page.getByTestId('status-chip-FAILED').click();
    expect(
      await page
        .getByTestId('status-chip-FAILED')
        .locator('.chip-word')
        .evaluate((e) => e.getBoundingClientRect().width),
    ).toBeGreaterThan(20);
    await page.screenshot({ path: '/tmp/ui15b-shots/instances-1280.png' });
    await page.getByTestId('status-chip-all').click();
  });

  it('previews a bulk action from that line and keeps the table in view', async () => {
    const { page } = app;
    // when: the user asks to cancel the live instances of the filter
    await page.getByTestId('bulk-menu').click();
    await page.getByTestId('bulk-cancel').click();
    const preview = page.getByTestId('bulk-preview');
    await preview.waitFor();
    // then: the preview counts them (running, waiting and suspended are live)
    const live = (counts.RUNNING ?? 0) + (counts.WAITING ?? 0) + (counts.SUSPENDED ?? 0);
    expect(await preview.getAttribute('data-count')).toBe(String(live));
    // and it is whole on screen, above the table's first row
    const box = await preview.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 1280 && box.y >= 0).toBe(true);
    await page.screenshot({ path: '/tmp/ui15b-shots/instances-bulk-preview-1280.png' });
    // when: they think better of it and click away, the panel closes and the line is one line again
    await page.getByTestId('bulk-dismiss').click();
    await preview.waitFor({ state: 'detached' });
    await page.locator('.monitor-head h2').click();
    await page.getByTestId('bulk-panel').waitFor({ state: 'detached' });
    expect((await page.locator('.chips-row').boundingBox())?.height).toBeLessThanOrEqual(32);
  });

  it('a chip drawn without its word shows it under keyboard focus, and names it in its title', async () => {
    const { page } = app;
    const word = (status: string) =>
      page
        .getByTestId(`status-chip-${status}`)
        .locator('.chip-word')
        .evaluate((e) => e.getBoundingClientRect().width);
    // given: at 1280 the chips draw dots and counts only
    expect(await word('PENDING')).toBeLessThanOrEqual(1);
    expect(await page.getByTestId('status-chip-PENDING').getAttribute('title')).toBe(
      `pending: ${(counts.PENDING ?? 0).toLocaleString('en-US')}`,
    );
    // when: the keyboard moves from "All" to the first status chip
    await page.getByTestId('status-chip-all').focus();
    await page.keyboard.press('Tab');
    // then: that chip draws its word; the others still do not
    await expect.poll(() => word('PENDING')).toBeGreaterThan(20);
    expect(await page.getByTestId('status-chip-PENDING').locator('.chip-word').textContent()).toBe('pending');
    expect(await word('RUNNING')).toBeLessThanOrEqual(1);
    // when: focus moves on, the word moves with it
    await page.keyboard.press('Tab');
    await expect.poll(() => word('RUNNING')).toBeGreaterThan(20);
    await expect.poll(() => word('PENDING')).toBeLessThanOrEqual(1);
    await page.keyboard.press('Escape');
  });

  it('in a narrow window (900 and 1024 px) every filter stays inside the filter panel', async () => {
    const { page } = app;
    try {
      for (const width of [900, 1024]) {
        await page.setViewportSize({ width, height: 800 });
        const panel = await page.locator('.filter-bar').boundingBox();
        const outside = await page.locator('.filter-bar input, .filter-bar select, .filter-bar button').evaluateAll(
          (els, right) =>
            els.flatMap((el) => {
              const b = el.getBoundingClientRect();
              return b.width > 0 && b.right > right + 0.5 ? [`${el.getAttribute('data-testid') ?? el.tagName}: ${Math.round(b.right)} > ${Math.round(right)}`] : [];
            }),
          (panel?.x ?? 0) + (panel?.width ?? 0),
        );
        expect(outside, `${width} px`).toEqual([]);
        // and the title row's buttons keep their text on one line
        for (const id of ['start-toggle', 'refresh-instances']) expect((await page.getByTestId(id).boundingBox())?.height, `${width} px: ${id}`).toBeLessThan(36);
        await page.screenshot({ path: `/tmp/ui15b-shots/instances-${width}.png` });
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
  });

  it('at 1440×900, keeps the one line too', async () => {
    const { page } = app;
    await page.setViewportSize({ width: 1440, height: 900 });
    try {
      expect((await page.locator('.chips-row').boundingBox())?.height).toBeLessThanOrEqual(32);
      await page.screenshot({ path: '/tmp/ui15b-shots/instances-1440.png' });
      await page.getByTestId('bulk-menu').click();
      await page.getByTestId('bulk-retry').click();
      await page.getByTestId('bulk-preview').waitFor();
      expect(await page.getByTestId('bulk-preview').getAttribute('data-count')).toBe(String(counts.FAILED));
      await page.screenshot({ path: '/tmp/ui15b-shots/instances-bulk-preview-1440.png' });
      await page.keyboard.press('Escape');
      await page.getByTestId('bulk-panel').waitFor({ state: 'detached' });
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
  });
});
