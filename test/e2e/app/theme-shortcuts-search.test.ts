// The app frame in Chromium through the browser host (issue 15, item 10): the colours follow the
// system's light or dark setting (prefers-color-scheme), `?` opens the keyboard-shortcut help
// (Escape closes it; typed into a field it is just a character), and the workflow sidebar's search
// box filters the list by name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computedStyle, startMonitorApp, type MonitorApp } from '../../helpers/monitor-app';

let app: MonitorApp;

beforeAll(async () => {
  app = await startMonitorApp({
    workflows: ['examples/ota-upgrade.workflow.json', 'examples/purchase-approval.workflow.json', 'test/fixtures/monitor-refund.workflow.json'],
    viewport: { width: 1280, height: 720 },
  });
  await app.page.getByTestId('workflow-item-ota-upgrade').waitFor();
});
afterAll(async () => {
  await app?.close();
});

/** The rgb() channels of a computed colour, summed: low is dark, high is light. */
function lightness(rgb: string): number {
  const m = /rgba?\((\d+), (\d+), (\d+)/.exec(rgb);
  if (!m) throw new Error(`not a colour: ${rgb}`);
  return Number(m[1]) + Number(m[2]) + Number(m[3]);
}

describe('dark mode', () => {
  it('follows the system setting: dark surfaces and light text when it asks for dark, and back', async () => {
    const { page } = app;
    const html = page.locator('html');
    const sidebar = page.locator('.sidebar');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(lightness(await computedStyle(html, 'backgroundColor'))).toBeGreaterThan(600);
    expect(lightness(await computedStyle(sidebar, 'backgroundColor'))).toBeGreaterThan(700);
    // when: the system turns to dark
    await page.emulateMedia({ colorScheme: 'dark' });
    // then: the page, the sidebar and the table are dark, the text light, the form controls dark
    expect(lightness(await computedStyle(html, 'backgroundColor'))).toBeLessThan(150);
    expect(lightness(await computedStyle(sidebar, 'backgroundColor'))).toBeLessThan(150);
    await page.getByTestId('nav-instances').click();
    expect(lightness(await computedStyle(page.getByTestId('instances-table'), 'backgroundColor'))).toBeLessThan(150);
    expect(lightness(await computedStyle(page.locator('.itable-head'), 'backgroundColor'))).toBeLessThan(150);
    expect(lightness(await computedStyle(page.locator('.app-main h2').first(), 'color'))).toBeGreaterThan(600);
    expect(await computedStyle(html, 'colorScheme')).toBe('dark');
    // and the designer's canvas too
    await page.getByTestId('nav-designer').click();
    expect(lightness(await computedStyle(page.getByTestId('designer-canvas'), 'backgroundColor'))).toBeLessThan(150);
    await page.emulateMedia({ colorScheme: 'light' });
    expect(lightness(await computedStyle(page.getByTestId('designer-canvas'), 'backgroundColor'))).toBeGreaterThan(700);
  });

  it("an instance's banner, graph nodes, graph controls and node status are dark too, their text light", async () => {
    const { page } = app;
    // given: an instance that failed after compensating its first node
    const { id } = await app.api<{ id: number }>('instance:start', { workflow: 'monitor-refund', variables: { refundOk: true } });
    await page.evaluate((to) => {
      location.hash = to;
    }, `#/instances/${id}`);
    await page.locator(`[data-testid="instance-detail"][data-id="${id}"][data-status="FAILED"]`).waitFor({ timeout: 20_000 });
    await expect.poll(() => page.getByTestId('graph-node-charge').getAttribute('data-state')).toBe('compensated');
    const surfaces = {
      banner: page.getByTestId('failure-banner'),
      compensated: page.getByTestId('graph-node-charge'),
      failed: page.getByTestId('graph-node-ship'),
      zoomIn: page.getByTestId('instance-graph').locator('.react-flow__controls-button').first(),
    };
    const texts = {
      banner: page.getByTestId('failure-banner'),
      compensated: page.getByTestId('graph-node-charge').locator('.gnode-title'),
      failed: page.getByTestId('graph-node-ship').locator('.gnode-title'),
    };
    // in light mode these are light surfaces with dark text
    for (const [name, l] of Object.entries(surfaces)) expect(lightness(await computedStyle(l, 'backgroundColor')), name).toBeGreaterThan(600);
    for (const [name, l] of Object.entries(texts)) expect(lightness(await computedStyle(l, 'color')), name).toBeLessThan(400);
    // when: the system turns to dark
    await page.emulateMedia({ colorScheme: 'dark' });
    // then: no light surface is left with light text on it (polled: React Flow's colorMode="system"
    // follows the scheme through a matchMedia listener and a re-render, so its controls turn dark a
    // moment after the page's CSS does; read at once, they failed a fresh-clone CI run)
    for (const [name, l] of Object.entries(surfaces))
      await expect.poll(async () => lightness(await computedStyle(l, 'backgroundColor')), { message: name, timeout: 5000 }).toBeLessThan(250);
    for (const [name, l] of Object.entries(texts))
      await expect.poll(async () => lightness(await computedStyle(l, 'color')), { message: name, timeout: 5000 }).toBeGreaterThan(450);
    // the node panel's status chip too
    await page.getByTestId('graph-node-ship').click();
    const chip = page.locator('[data-testid="node-panel"][data-node="ship"] [data-testid="node-panel-status"]');
    expect(lightness(await computedStyle(chip, 'backgroundColor'))).toBeLessThan(250);
    expect(lightness(await computedStyle(chip, 'color'))).toBeGreaterThan(450);
    await page.emulateMedia({ colorScheme: 'light' });
  });
});

describe('keyboard-shortcut help', () => {
  it('opens on ?, lists the shortcuts, closes on Escape; a ? typed into a field stays text', async () => {
    const { page } = app;
    await page.getByTestId('nav-instances').click();
    await page.locator('.app-main h2').first().click();
    // when: ? is pressed
    await page.keyboard.press('?');
    // then: the help is shown, as a dialog, with the designer's and the app's shortcuts
    const dialog = page.getByTestId('shortcuts-dialog');
    await dialog.waitFor();
    expect(await dialog.getAttribute('role')).toBe('dialog');
    const text = (await dialog.textContent()) ?? '';
    expect(text).toMatch(/Show this help/);
    expect(text).toMatch(/Undo/);
    expect(text).toMatch(/Ctrl\+S|⌘\+S/);
    // Escape closes it
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    // in the Designer as well, and its close button closes it
    await page.getByTestId('nav-designer').click();
    await page.getByTestId('designer-canvas').click({ position: { x: 20, y: 20 } });
    await page.keyboard.press('?');
    await dialog.waitFor();
    await page.getByTestId('shortcuts-close').click();
    await dialog.waitFor({ state: 'detached' });
    // a ? typed into a text field is a character
    await page.getByTestId('workflow-search').fill('');
    await page.getByTestId('workflow-search').press('?');
    expect(await page.getByTestId('workflow-search').inputValue()).toBe('?');
    expect(await dialog.count()).toBe(0);
    await page.getByTestId('workflow-search').fill('');
  });
});

describe('workflow sidebar search', () => {
  it('filters the workflows by name as you type, says when none matches, and Escape clears it', async () => {
    const { page } = app;
    const names = () => page.locator('[data-testid^="workflow-item-"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')));
    expect(await names()).toHaveLength(3);
    // when: part of a name is typed (any case)
    await page.getByTestId('workflow-search').fill('PURCH');
    // then: only that workflow is listed
    expect(await names()).toEqual(['workflow-item-purchase-approval']);
    await page.getByTestId('workflow-search').fill('a');
    expect((await names()).sort()).toEqual(['workflow-item-ota-upgrade', 'workflow-item-purchase-approval']);
    // and a search that matches nothing says so
    await page.getByTestId('workflow-search').fill('zzz');
    expect(await names()).toEqual([]);
    expect(await page.getByTestId('workflow-search-empty').textContent()).toMatch(/zzz/);
    // Escape clears it
    await page.getByTestId('workflow-search').press('Escape');
    expect(await page.getByTestId('workflow-search').inputValue()).toBe('');
    expect(await names()).toHaveLength(3);
    expect(app.errors).toEqual([]);
  });
});
