// The Designer's panels do not cover the work, in real Chromium through the browser host at
// 1280×720 (issue 15, item 7): selecting an edge whose target lies where the properties drawer
// opens moves the view so that its target and label stay in sight; a toast never sits over the
// canvas or the Problems panel.
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importViaUi, nodeAt, startDesignerApp, type DesignerApp } from '../../helpers/designer-e2e';

let app: DesignerApp;

beforeAll(async () => {
  app = await startDesignerApp({ viewport: { width: 1280, height: 720 } });
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

async function box(locator: Locator): Promise<Box> {
  const b = await locator.boundingBox();
  if (!b) throw new Error('not on screen');
  return b;
}

function overlaps(a: Box, b: Box): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/** Whether `inner` lies wholly inside `outer`. */
function inside(inner: Box, outer: Box): boolean {
  return inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.width <= outer.x + outer.width && inner.y + inner.height <= outer.y + outer.height;
}

/**
 * Waits until `locator`'s box stops moving (the view's pan animation ended): unchanged over four
 * looks 60 ms apart, so a page that missed a frame or two under load is not taken for still.
 */
async function settled(page: Page, locator: Locator): Promise<Box> {
  let last = await box(locator);
  let still = 0;
  for (let i = 0; i < 80 && still < 4; i++) {
    await page.waitForTimeout(60);
    const now = await box(locator);
    still = Math.abs(now.x - last.x) < 0.5 && Math.abs(now.y - last.y) < 0.5 ? still + 1 : 0;
    last = now;
  }
  return last;
}

const WIDE = {
  format: 1,
  name: 'wide',
  nodes: [
    { id: 'start', type: 'pass' },
    { id: 'middle', type: 'pass' },
    { id: 'finish', type: 'pass' },
  ],
  edges: [
    { from: 'start', to: 'middle' },
    { from: 'middle', to: 'finish', label: 'when the middle is done' },
  ],
  ui: { positions: { start: { x: 0, y: 0 }, middle: { x: 420, y: 0 }, finish: { x: 840, y: 0 } } },
};

describe('the properties drawer and toasts', () => {
  it("selecting an edge keeps its target and label clear of the drawer", async () => {
    const { page } = app;
    // given: a wide drawing fitted to the whole canvas (nothing selected, the drawer closed)
    await importViaUi(page, JSON.stringify(WIDE));
    await page.locator('.react-flow__pane').click({ position: { x: 8, y: 8 } });
    await page.getByTestId('properties-panel').waitFor({ state: 'detached' }).catch(() => undefined);
    const target = nodeAt(page, 'finish');
    await settled(page, target);
    // when: the last edge is selected by its label
    await page.getByTestId('edge-label-middle->finish').click();
    await page.locator('[data-testid="properties-panel"][data-selection="edge"]').waitFor();
    // then: the drawer covers neither the edge's target nor its label, both in the canvas
    const node = await settled(page, target);
    const label = await box(page.getByTestId('edge-label-middle->finish'));
    const drawer = await box(page.getByTestId('properties-panel'));
    const canvas = await box(page.getByTestId('designer-canvas'));
    expect(overlaps(node, drawer), 'target under the drawer').toBe(false);
    expect(overlaps(label, drawer), 'label under the drawer').toBe(false);
    expect(inside(node, canvas)).toBe(true);
    expect(inside(label, canvas)).toBe(true);
    expect(overlaps(await box(nodeAt(page, 'middle')), drawer), 'source under the drawer').toBe(false);
  });

  it('a toast never covers the canvas or the Problems panel', async () => {
    const { page } = app;
    // when: a call fails that the designer does not show itself (a workflow deleted meanwhile)
    await app.api('workflow:save', { definition: { format: 1, name: 'soon-gone', nodes: [{ id: 'a', type: 'pass' }], edges: [] } });
    await page.getByTestId('nav-instances').click();
    await page.getByTestId('refresh-workflows').click();
    await page.getByTestId('workflow-item-soon-gone').waitFor();
    await page.getByTestId('nav-designer').click();
    await page.getByTestId('view-designer').waitFor();
    await app.api('workflow:delete', { name: 'soon-gone' });
    await page.getByTestId('workflow-item-soon-gone').click();
    const discard = page.getByTestId('unsaved-discard');
    if (await discard.isVisible().catch(() => false)) await discard.click();
    await page.getByTestId('toast').first().waitFor();
    // then: it is clear of the view: canvas, drawer and Problems panel
    const main = await box(page.locator('.app-main'));
    for (const t of await page.getByTestId('toast').all()) expect(overlaps(await box(t), main)).toBe(false);
    const problems = await box(page.getByTestId('problems-panel'));
    expect(problems.y + problems.height).toBeLessThanOrEqual(main.y + main.height + 0.5);
  });
});
