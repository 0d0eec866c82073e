// End to end in Chromium through the browser host (issue 15, item 9): room for the instance table.
// At 1280×720 the start panel is folded into the title row once instances exist, so the table
// shows more than the six rows it did; at 1440 the columns show their whole text (the long ones
// end in an ellipsis with the full text in the title); a click on a column header sorts by it,
// with aria-sort saying how: id and start time on the engine (every matching instance, paged in
// that order), the other columns over the loaded rows, and the table says so.
import fs from 'node:fs';
import path from 'node:path';
import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertManyInstances } from '../../helpers/many-instances';
import {
  attrOfAll,
  ROOT,
  rowIdsOnScreen,
  scrollToEnd,
  startMonitorApp,
  textOfAll,
  waitUntil,
  type MonitorApp,
} from '../../helpers/monitor-app';

const N = 500;
let app: MonitorApp;

beforeAll(async () => {
  const wf = JSON.parse(fs.readFileSync(path.join(ROOT, 'examples/ota-upgrade.workflow.json'), 'utf8')) as {
    nodes: { id: string }[];
  };
  app = await startMonitorApp({
    workflows: ['examples/ota-upgrade.workflow.json'],
    viewport: { width: 1280, height: 720 },
    // The inserted rows stay as inserted: nothing works them.
    hostWorker: false,
    prepare: async (engine) => {
      const id = (await engine.listWorkflows())[0]?.latestId ?? 0;
      // An hour and a quarter old: waits, durations and overdue retries read "1h 16m", as a day's
      // rows do.
      insertManyInstances(engine.db.raw, { workflowId: id, nodeIds: wf.nodes.map((n) => n.id), count: N, newestAt: Date.now() - 76 * 60_000 - 30_000 });
    },
  });
  await app.page.getByTestId('nav-instances').click();
  await app.page.getByTestId(`instance-row-${N}`).waitFor();
});
afterAll(async () => {
  await app?.close();
});

/** Rows whose whole box is inside the table's scrolling viewport. */
async function rowsFullyVisible(): Promise<number> {
  const view = await app.page.getByTestId('instances-rows').boundingBox();
  if (!view) throw new Error('no table');
  const rows = app.page.locator('[data-testid^="instance-row-"]');
  let n = 0;
  for (let i = 0; i < (await rows.count()); i++) {
    const b = await rows.nth(i).boundingBox();
    if (b && b.y >= view.y - 0.5 && b.y + b.height <= view.y + view.height + 0.5) n++;
  }
  return n;
}

/** The `aria-sort` of every column header, in column order. */
function ariaSorts(): Promise<(string | null)[]> {
  return attrOfAll(app.page.locator('.itable-head [role="columnheader"]'), 'aria-sort');
}

/** Heights of the cells of the rows on screen that are taller than one line of text, as `row/column: px`. */
async function wrappedCells(): Promise<string[]> {
  return app.page.locator('[data-testid^="instance-row-"]').evaluateAll((rows) =>
    rows.flatMap((row) =>
      [...row.querySelectorAll('[role="cell"]')].flatMap((cell, i) => {
        const h = cell.getBoundingClientRect().height;
        // one line of 13 px text is about 17 px high (a status chip 20 px); two are over 30
        return h > 24 ? [`${row.getAttribute('data-testid')}/${i}: ${Math.round(h)}px`] : [];
      }),
    ),
  );
}

/** The rows on screen (and the header) whose content is wider than the row, as `testid: content/row px`. */
function overflowingRows(): Promise<string[]> {
  return app.page.locator('.itable-row').evaluateAll((rows) =>
    rows.flatMap((row) =>
      row.scrollWidth > row.clientWidth ? [`${row.getAttribute('data-testid') ?? 'head'}: ${row.scrollWidth}/${row.clientWidth}px`] : [],
    ),
  );
}

/** Whether the first element `locator` matches shows its whole text (nothing cut by an ellipsis). */
function fits(locator: Locator): Promise<boolean> {
  return locator.evaluate((el) => {
    const e = el as unknown as { scrollWidth: number; clientWidth: number };
    return e.scrollWidth <= e.clientWidth;
  });
}

/**
 * Whether the Started column shows a start on another day whole: a copy of `row` (same grid, same
 * column widths) is put beside it with its Started cell holding, in turn, the other-day form of
 * formatTime (renderer/src/monitor/format.ts) for each month at 23:58 on the 17th, in the page's
 * locale. Answers whether every one fits, and the widest text. The copy is removed.
 */
function widestOtherDayStart(row: Locator): Promise<{ fits: boolean; text: string }> {
  return row.evaluate((el) => {
    const copy = el.cloneNode(true) as HTMLElement;
    el.parentElement?.appendChild(copy);
    try {
      const cell = copy.querySelectorAll<HTMLElement>('[role="cell"]')[3];
      if (!cell) throw new Error('no Started cell');
      let widest = { fits: true, text: '', width: 0 };
      for (let month = 0; month < 12; month++) {
        const d = new Date(2026, month, 17, 23, 58, 0);
        const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
        cell.textContent = `${d.toLocaleDateString(undefined, { day: 'numeric', month: 'short' })} ${time.slice(0, 5)}`;
        if (cell.scrollWidth > widest.width) widest = { fits: widest.fits, text: cell.textContent, width: cell.scrollWidth };
        if (cell.scrollWidth > cell.clientWidth) widest.fits = false;
      }
      return { fits: widest.fits, text: widest.text };
    } finally {
      copy.remove();
    }
  });
}

describe('the instance table', () => {
  it('at 1280×720, folds the start panel into the title row when instances exist and shows more rows', async () => {
    const { page } = app;
    // given: 500 instances; then the start panel is folded, in the title row
    expect(await page.getByTestId('start-panel').getAttribute('data-open')).toBe('false');
    expect(await page.getByTestId('start-toggle').getAttribute('aria-expanded')).toBe('false');
    expect(await page.getByTestId('start-vars').count()).toBe(0);
    const head = await page.locator('.monitor-head').boundingBox();
    const toggle = await page.getByTestId('start-toggle').boundingBox();
    expect(toggle && head && toggle.y >= head.y && toggle.y + toggle.height <= head.y + head.height).toBe(true);
    // and the table shows at least nine whole rows (it showed six under the open panel)
    expect(await rowsFullyVisible()).toBeGreaterThanOrEqual(9);
    // when: the user unfolds it, it is all there; folding it gives the room back
    await page.getByTestId('start-toggle').click();
    await page.getByTestId('start-vars').waitFor();
    expect(await page.getByTestId('start-toggle').getAttribute('aria-expanded')).toBe('true');
    expect(await page.getByTestId('selected-workflow').textContent()).toBe('ota-upgrade');
    await page.getByTestId('start-toggle').click();
    await page.getByTestId('start-vars').waitFor({ state: 'detached' });
    // and the choice stays while a detail comes and goes
    await page.getByTestId(`instance-row-${N}`).click();
    await page.getByTestId('detail-back').click();
    expect(await page.getByTestId('start-panel').getAttribute('data-open')).toBe('false');
    // and no cell wraps onto a second line in its 34 px row (a long wait ends in an ellipsis, whole in its title)
    expect(await wrappedCells()).toEqual([]);
    // and no row is wider than the table: the columns' minimums fit at 1280
    expect(await overflowingRows()).toEqual([]);
    const waiting = page.locator('[data-testid^="instance-waiting-"]').filter({ has: page.locator('.wait') }).first();
    expect(await waiting.getAttribute('title')).toMatch(/^(approval|retry|person|timer|event|child instances) for \d+ h( \d+ min)?, since /);
  });

  it('at 1440 wide, the columns show their whole text; the long ones end in an ellipsis with the text in the title', async () => {
    const { page } = app;
    await page.setViewportSize({ width: 1440, height: 900 });
    try {
      await page.waitForTimeout(200);
      const ids = (await rowIdsOnScreen(page)).slice(0, 15);
      expect(ids.length).toBe(15);
      for (const id of ids) {
        const row = page.getByTestId(`instance-row-${id}`);
        const cells = row.locator('[role="cell"]');
        // ID, Workflow (name, version, business key), Status, Started, Duration, Attempt, Next retry, Waiting for
        for (const i of [0, 1, 2, 3, 4, 6, 7, 8]) expect(await fits(cells.nth(i)), `row ${id}, column ${i}`).toBe(true);
        // Current node and Reason may be cut: their title holds the whole text
        for (const testId of [`instance-current-${id}`, `instance-reason-${id}`]) {
          const cell = page.getByTestId(testId);
          if (!(await fits(cell))) expect(await cell.getAttribute('title')).toBe((await cell.textContent())?.trim());
        }
        expect(await page.getByTestId(`instance-workflow-${id}`).getAttribute('title')).toBe(`ota-upgrade v1 · key-${id - 1}`);
      }
      // and a start on another day ("17 May 23:58" in the page's own locale, the widest month) fits
      // its column too, whatever the hour the test runs at
      expect(await widestOtherDayStart(page.getByTestId(`instance-row-${ids[0]}`))).toEqual({ fits: true, text: expect.stringMatching(/23:58/) });
      // and every header shows its whole label
      for (const label of await page.locator('.itable-head .sort-button').all()) expect(await fits(label)).toBe(true);
      // and no cell wraps onto a second line in its 34 px row
      expect(await wrappedCells()).toEqual([]);
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
  });

  it('sorts by id on the engine, both ways, paging in that order', async () => {
    const { page } = app;
    // given: the engine's order, newest first, said by aria-sort
    expect((await ariaSorts())[0]).toBe('descending');
    expect(await rowIdsOnScreen(page).then((ids) => ids.slice(0, 3))).toEqual([N, N - 1, N - 2]);
    // when: the ID header is clicked
    await page.getByTestId('sort-id').click();
    // then: oldest first, from the engine: the first row is #1 and the next page follows on
    await waitUntil(() => rowIdsOnScreen(page), (ids) => ids[0] === 1 && ids[1] === 2, 'oldest first');
    expect(await ariaSorts()).toEqual(['ascending', 'none', 'none', 'none', 'none', 'none', 'none', 'none', 'none', 'none']);
    await scrollToEnd(page.getByTestId('instances-rows'));
    await waitUntil(
      () => page.getByTestId('instances-summary').getAttribute('data-loaded'),
      (n) => Number(n) >= 400,
      'the next page',
    );
    await scrollToEnd(page.getByTestId('instances-rows'));
    await page.waitForTimeout(200);
    const onScreen = await rowIdsOnScreen(page);
    const last = onScreen[onScreen.length - 1] ?? 0;
    expect(last).toBeGreaterThan(200);
    expect(onScreen).toEqual([...onScreen].sort((a, b) => a - b));
    expect(await page.getByTestId('instances-sort-note').count()).toBe(0);
    // and Started sorts the same way (ids are given in start order), newest first on a click
    await page.getByTestId('sort-started').click();
    await waitUntil(() => rowIdsOnScreen(page), (ids) => ids[0] === N, 'newest first again');
    expect((await ariaSorts())[3]).toBe('descending');
  });

  it('sorts by another column over the loaded rows and says so', async () => {
    const { page } = app;
    // when: Status is clicked, then clicked again
    await page.getByTestId('sort-status').click();
    expect((await ariaSorts())[2]).toBe('ascending');
    const statuses = () => textOfAll(page.locator('[data-testid^="instance-status-"]'));
    const up = await statuses();
    expect(up[0]).toBe('CANCELLED');
    expect(up).toEqual([...up].sort());
    // the loaded rows only (500 match, 200 are loaded): the footer says it
    expect(await page.getByTestId('instances-sort-note').textContent()).toMatch(/sorted among the 200 loaded rows/);
    await page.getByTestId('sort-status').click();
    expect((await ariaSorts())[2]).toBe('descending');
    const down = await statuses();
    expect(down[0]).toBe('WAITING');
    expect(down).toEqual([...down].sort().reverse());
    // and by attempt, largest first, rows without one last
    await page.getByTestId('sort-attempt').click();
    expect((await ariaSorts())[6]).toBe('descending');
    const attempts = await textOfAll(page.locator('[data-testid^="instance-attempt-"]'));
    expect(attempts[0]).toBe('3/3');
    // back to the engine's order
    await page.getByTestId('sort-id').click();
    await waitUntil(() => rowIdsOnScreen(page), (ids) => ids[0] === N, 'newest first');
    expect(app.errors).toEqual([]);
  });
});
