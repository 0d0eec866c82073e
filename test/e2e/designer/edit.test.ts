// Editing on the Designer's canvas in real Chromium: C09 (deleting a node deletes its edges in the
// model; undo and redo), copy/paste with fresh ids, keyboard shortcuts, multi-select, moving with
// snap to grid, auto-layout as one undo step.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addNode, canvasCentre, clickPane, connect, exportViaUi, nodeAt, openWorkflowSettings, selectNode, startDesignerApp, type DesignerApp } from '../../helpers/designer-e2e';

let app: DesignerApp;
const mod = process.platform === 'darwin' ? 'Meta' : 'Control';

beforeAll(async () => {
  app = await startDesignerApp();
});

afterAll(async () => {
  await app?.close();
});

interface Exported {
  nodes: Array<{ id: string; name?: string }>;
  edges: Array<{ from: string; to: string }>;
  ui: { positions: Record<string, { x: number; y: number }> };
}

async function exported(page: Page): Promise<Exported> {
  return JSON.parse(await exportViaUi(page)) as Exported;
}

async function canvasIds(page: Page): Promise<string[]> {
  return page.locator('.react-flow__node').evaluateAll((els) => els.map((e) => e.getAttribute('data-id') ?? ''));
}

async function edgeIds(page: Page): Promise<string[]> {
  return page.locator('.react-flow__edge').evaluateAll((els) => els.map((e) => e.getAttribute('data-id') ?? ''));
}

/** A fresh draft with a → b → c in a row. */
async function drawABC(page: Page): Promise<void> {
  await page.getByTestId('new-workflow').click();
  const discard = page.getByTestId('unsaved-discard');
  if (await discard.isVisible().catch(() => false)) await discard.click();
  const c = await canvasCentre(page);
  await addNode(page, 'pass', 'a', { x: c.x - 260, y: c.y - 100 });
  await addNode(page, 'pass', 'b', { x: c.x, y: c.y - 100 });
  await addNode(page, 'pass', 'c', { x: c.x + 260, y: c.y - 100 });
  await connect(page, 'a', 'b');
  await connect(page, 'b', 'c');
  expect(await edgeIds(page)).toEqual(['a->b', 'b->c']);
}

describe('editing on the canvas', () => {
  it('C09 — designer: deleting a node deletes its edges in the model', async () => {
    const { page } = app;
    // given: a → b → c
    await drawABC(page);
    // when: b is deleted with the Delete key
    await selectNode(page, 'b');
    await page.keyboard.press('Delete');
    // then: the export has no edge naming b
    await expect.poll(() => canvasIds(page)).toEqual(['a', 'c']);
    const after = await exported(page);
    expect(after.nodes.map((n) => n.id)).toEqual(['a', 'c']);
    expect(after.edges.filter((e) => e.from === 'b' || e.to === 'b')).toEqual([]);
    expect(after.edges).toEqual([]);
    expect(Object.keys(after.ui.positions)).toEqual(['a', 'c']);
    // undo restores b and both edges (one step)
    await page.keyboard.press(`${mod}+z`);
    await expect.poll(() => canvasIds(page)).toEqual(['a', 'b', 'c']);
    expect(await edgeIds(page)).toEqual(['a->b', 'b->c']);
    expect((await exported(page)).edges).toEqual([
      { from: 'a', to: 'b' },
      { from: 'b', to: 'c' },
    ]);
    // redo removes them again
    await page.keyboard.press(`${mod}+Shift+z`);
    await expect.poll(() => canvasIds(page)).toEqual(['a', 'c']);
    expect(await edgeIds(page)).toEqual([]);
    expect((await exported(page)).edges).toEqual([]);
    // and the toolbar buttons do the same
    await page.getByTestId('undo').click();
    await expect.poll(() => edgeIds(page)).toEqual(['a->b', 'b->c']);
    await page.getByTestId('redo').click();
    await expect.poll(() => edgeIds(page)).toEqual([]);
  });

  it('copy/paste gives fresh ids, offset copies with their inner edges; editing the copy leaves the original', async () => {
    const { page } = app;
    await drawABC(page);
    await selectNode(page, 'a');
    await page.getByTestId('prop-name').fill('Original');
    // when: a and b (shift-click adds to the selection) are copied and pasted
    await nodeAt(page, 'a').click();
    await nodeAt(page, 'b').click({ modifiers: ['Shift'] });
    await expect.poll(() => page.getByTestId('properties-panel').getAttribute('data-selection')).toBe('many');
    await page.keyboard.press(`${mod}+c`);
    await page.keyboard.press(`${mod}+v`);
    // then: fresh ids, the edge between them copied, the copies selected and moved off the originals
    await expect.poll(() => canvasIds(page)).toEqual(['a', 'b', 'c', 'a-2', 'b-2']);
    expect(await edgeIds(page)).toEqual(['a->b', 'b->c', 'a-2->b-2']);
    const pos = (await exported(page)).ui.positions;
    expect(pos['a-2']).toEqual({ x: pos['a']!.x + 40, y: pos['a']!.y + 40 });
    expect(await nodeAt(page, 'a-2').getAttribute('class')).toContain('selected');
    // editing the copy leaves the original unchanged
    await selectNode(page, 'a-2');
    expect(await page.getByTestId('prop-name').inputValue()).toBe('Original');
    await page.getByTestId('prop-name').fill('The copy');
    const out = await exported(page);
    expect(out.nodes.find((n) => n.id === 'a')?.name).toBe('Original');
    expect(out.nodes.find((n) => n.id === 'a-2')?.name).toBe('The copy');
    // pasting again makes new ids again; Ctrl+D duplicates the selection
    await clickPane(page);
    await page.keyboard.press(`${mod}+v`);
    await expect.poll(() => canvasIds(page)).toEqual(['a', 'b', 'c', 'a-2', 'b-2', 'a-3', 'b-3']);
    await selectNode(page, 'c');
    await page.keyboard.press(`${mod}+d`);
    await expect.poll(() => canvasIds(page)).toContain('c-2');
    // Ctrl+A selects everything; Delete then empties the canvas in one undo step
    await page.keyboard.press(`${mod}+a`);
    await page.keyboard.press('Delete');
    await expect.poll(() => page.locator('.react-flow__node').count()).toBe(0);
    await page.keyboard.press(`${mod}+z`);
    await expect.poll(() => page.locator('.react-flow__node').count()).toBe(8);
  });

  it('moves a node on the grid in one undo step, box-selects with Shift, and auto-layouts in one step', async () => {
    const { page } = app;
    await drawABC(page);
    const before = (await exported(page)).ui.positions;
    // drag b down by ~93 px: it lands on the 20 px grid
    const box = (await nodeAt(page, 'b').boundingBox())!;
    await page.mouse.move(box.x + 40, box.y + 20);
    await page.mouse.down();
    await page.mouse.move(box.x + 47, box.y + 113, { steps: 8 });
    await page.mouse.up();
    const moved = (await exported(page)).ui.positions;
    expect(moved['b']!.y).not.toBe(before['b']!.y);
    expect(moved['b']!.x % 20).toBe(0);
    expect(moved['b']!.y % 20).toBe(0);
    await page.keyboard.press(`${mod}+z`);
    expect((await exported(page)).ui.positions['b']).toEqual(before['b']);
    // box selection with Shift held: a rectangle around a and b selects both
    const a = (await nodeAt(page, 'a').boundingBox())!;
    const b = (await nodeAt(page, 'b').boundingBox())!;
    await page.keyboard.down('Shift');
    await page.mouse.move(a.x - 20, a.y - 30);
    await page.mouse.down();
    await page.mouse.move(b.x + b.width + 10, b.y + b.height + 30, { steps: 6 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await expect.poll(() => page.locator('.react-flow__node.selected').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')))).toEqual(['a', 'b']);
    // auto-layout: every node moves in one step, undone by one undo
    await page.getByTestId('auto-layout').click();
    const laid = (await exported(page)).ui.positions;
    expect(laid).not.toEqual(before);
    expect(laid['a']!.x).toBeLessThan(laid['b']!.x);
    expect(laid['b']!.x).toBeLessThan(laid['c']!.x);
    await page.getByTestId('undo').click();
    expect((await exported(page)).ui.positions).toEqual(before);
  });

  it('flow control: a concurrency limit with its key and a priority reach the export; clearing the limit drops the key', async () => {
    const { page } = app;
    await drawABC(page);
    await openWorkflowSettings(page);
    // the key waits for a limit
    expect(await page.getByTestId('prop-concurrency-key').isDisabled()).toBe(true);
    await page.getByTestId('prop-concurrency-limit').fill('2');
    await page.getByTestId('prop-concurrency-key').fill('tenant');
    await page.getByTestId('prop-priority').fill('-4');
    await page.getByTestId('prop-priority').blur();
    const set = JSON.parse(await exportViaUi(page)) as { concurrency?: unknown; priority?: unknown };
    expect(set.concurrency).toEqual({ limit: 2, key: 'tenant' });
    expect(set.priority).toBe(-4);
    // a priority out of range is shown at the field
    await page.getByTestId('prop-priority').fill('2000000');
    await expect.poll(() => page.getByTestId('properties-panel').textContent()).toMatch(/1000000/);
    await page.getByTestId('prop-priority').fill('');
    await page.getByTestId('prop-concurrency-limit').fill('');
    await page.getByTestId('prop-concurrency-limit').blur();
    const cleared = JSON.parse(await exportViaUi(page)) as Record<string, unknown>;
    expect('concurrency' in cleared).toBe(false);
    expect('priority' in cleared).toBe(false);
  });

  it('schedules: cron with its next five due times, zone, overlap and catch-up reach the export; a bad cron is named at the field', async () => {
    const { page } = app;
    await drawABC(page);
    await openWorkflowSettings(page);
    await page.getByTestId('schedule-add').click();
    await page.getByTestId('prop-schedule-0-id').fill('nightly');
    await page.getByTestId('prop-schedule-0-cron').fill('30 2 * * *');
    await page.getByTestId('prop-schedule-0-timezone').fill('Europe/Berlin');
    await page.getByTestId('prop-schedule-0-overlap').selectOption('cancel-previous');
    await page.getByTestId('prop-schedule-0-catchUp').selectOption('latest');
    // the next five due times, in the schedule's zone
    const times = await page.getByTestId('schedule-0-upcoming').locator('li').allTextContents();
    expect(times).toHaveLength(5);
    for (const t of times) expect(t).toMatch(/^\d{4}-\d\d-\d\d (02:30|03:00):00 (GMT\+1|GMT\+2|CET|CEST|MEZ|MESZ)$/);
    const set = JSON.parse(await exportViaUi(page)) as { schedules?: unknown };
    expect(set.schedules).toEqual([{ id: 'nightly', cron: '30 2 * * *', timezone: 'Europe/Berlin', overlap: 'cancel-previous', catchUp: 'latest' }]);
    // a bad expression is named at the field and no due times are shown
    await page.getByTestId('prop-schedule-0-cron').fill('30 25 * * *');
    await expect.poll(() => page.getByTestId('properties-panel').textContent()).toMatch(/Invalid value for hour: 25/);
    expect(await page.getByTestId('schedule-0-upcoming').count()).toBe(0);
    await page.getByTestId('schedule-0-remove').click();
    const cleared = JSON.parse(await exportViaUi(page)) as Record<string, unknown>;
    expect('schedules' in cleared).toBe(false);
  });

  it('ran without page errors or CSP violations', () => {
    expect(app.consoleErrors).toEqual([]);
  });
});
