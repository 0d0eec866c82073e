// The Designer's toolbar in Chromium through the browser host (issue 15's look at 1280×720): the
// name of the workflow being edited shows whole, the toolbar stays one line, and a new draft's
// "not saved yet" stays one line too, at every width from 1280 to 1600 px. Below 1600 px the file
// and workflow actions are icons that keep their names (aria-label, title); at 1600 they show their
// labels.
import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleText, importViaUi, startDesignerApp, type DesignerApp } from '../../helpers/designer-e2e';

let app: DesignerApp;

beforeAll(async () => {
  app = await startDesignerApp({ deploy: [JSON.parse(exampleText('purchase-approval'))], viewport: { width: 1280, height: 720 } });
});
afterAll(async () => {
  await app?.close();
});

/** Whether the element shows its whole text on one line (no ellipsis, no second line). */
function wholeOnOneLine(locator: Locator): Promise<boolean> {
  return locator.evaluate((el) => el.scrollWidth <= el.clientWidth && el.getBoundingClientRect().height < 26);
}

const ACTIONS = ['Import', 'Export', 'Rename', 'Duplicate', 'Delete'];

describe('the Designer toolbar', () => {
  it("at 1280×720 shows the workflow's whole name on one line, the actions as named icons", async () => {
    const { page } = app;
    await page.getByTestId('workflow-item-purchase-approval').click();
    await page.locator('[data-testid="view-designer"][data-workflow="purchase-approval"]').waitFor();
    const title = page.getByTestId('workflow-title');
    expect(await title.textContent()).toBe('purchase-approval');
    expect(await wholeOnOneLine(title)).toBe(true);
    // one line of buttons (each 26-28 px high, the bar's padding around them)
    expect((await page.getByRole('toolbar', { name: 'Designer' }).boundingBox())?.height).toBeLessThan(50);
    for (const name of ACTIONS) {
      const button = page.getByRole('button', { name, exact: true });
      expect(await button.isVisible(), name).toBe(true);
      expect(await button.locator('.rn-btn-label').isVisible(), name).toBe(false);
    }
    // a new draft: its name, "unsaved" and "not saved yet" each on one line
    await page.getByTestId('new-workflow').click();
    await page.getByTestId('palette-item-pass').dragTo(page.getByTestId('designer-canvas'));
    await page.getByTestId('unsaved-marker').waitFor();
    for (const l of [page.getByTestId('workflow-title'), page.getByTestId('unsaved-marker'), page.getByTestId('draft-tag')]) expect(await wholeOnOneLine(l)).toBe(true);
    expect((await page.getByRole('toolbar', { name: 'Designer' }).boundingBox())?.height).toBeLessThan(50);
  });

  it('a new draft shows its whole name beside "unsaved" and "not saved yet" at every width from 1280 to 1600', async () => {
    const { page } = app;
    // given: a draft imported under a name of 17 letters, changed and never saved
    await importViaUi(page, JSON.stringify({ ...JSON.parse(exampleText('purchase-approval')), name: 'purchase-requests' }));
    await page.getByTestId('draft-tag').waitFor();
    await page.getByTestId('palette-item-pass').dragTo(page.getByTestId('designer-canvas'));
    await page.getByTestId('unsaved-marker').waitFor();
    const title = page.getByTestId('workflow-title');
    expect(await title.textContent()).toBe('purchase-requests');
    try {
      for (const width of [1280, 1360, 1400, 1440, 1520, 1600]) {
        await page.setViewportSize({ width, height: 900 });
        // then: the name, the marks and the toolbar's one line hold at each width
        const widths = await title.evaluate((el) => `${el.scrollWidth}/${el.clientWidth}`);
        for (const l of [title, page.getByTestId('unsaved-marker'), page.getByTestId('draft-tag')]) expect(await wholeOnOneLine(l), `${width} px (name ${widths})`).toBe(true);
        expect((await page.getByRole('toolbar', { name: 'Designer' }).boundingBox())?.height, `${width} px`).toBeLessThan(50);
      }
      // and: a saved workflow of 17 letters with changes, beside "● unsaved" and its version picker
      await page.setViewportSize({ width: 1280, height: 720 });
      await page.getByTestId('workflow-item-purchase-approval').click();
      const discard = page.getByTestId('unsaved-discard');
      if (await discard.isVisible().catch(() => false)) await discard.click();
      await page.locator('[data-testid="view-designer"][data-workflow="purchase-approval"]').waitFor();
      await page.getByTestId('palette-item-pass').dragTo(page.getByTestId('designer-canvas'));
      await page.getByTestId('unsaved-marker').waitFor();
      expect(await title.textContent()).toBe('purchase-approval');
      for (const width of [1280, 1360, 1400, 1440, 1520, 1600]) {
        await page.setViewportSize({ width, height: 900 });
        const widths = await title.evaluate((el) => `${el.scrollWidth}/${el.clientWidth}`);
        for (const l of [title, page.getByTestId('unsaved-marker')]) expect(await wholeOnOneLine(l), `${width} px (name ${widths})`).toBe(true);
        expect((await page.getByRole('toolbar', { name: 'Designer' }).boundingBox())?.height, `${width} px`).toBeLessThan(50);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
  });

  it('at 1600 the actions show their labels', async () => {
    const { page } = app;
    await page.setViewportSize({ width: 1600, height: 900 });
    try {
      for (const name of ACTIONS) expect(await page.getByRole('button', { name, exact: true }).textContent(), name).toBe(name);
      for (const name of ACTIONS) expect(await page.getByRole('button', { name, exact: true }).locator('.rn-btn-label').isVisible(), name).toBe(true);
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
    expect(app.consoleErrors).toEqual([]);
  });
});
