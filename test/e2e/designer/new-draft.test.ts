// A new draft in the Designer, in real Chromium through the browser host (issue 15, item 10): the
// empty canvas says how to begin (and lets a palette drop through); "New" then Save asks for a
// name, with validation, instead of saving "untitled"; the input-variable list sets a string's
// minLength and pattern.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  dragFromPalette,
  exampleText,
  openWorkflowSettings,
  startDesignerApp,
  type DesignerApp,
} from '../../helpers/designer-e2e';

let app: DesignerApp;
const mod = process.platform === 'darwin' ? 'Meta' : 'Control';

beforeAll(async () => {
  app = await startDesignerApp({ deploy: [JSON.parse(exampleText('purchase-approval'))] });
});
afterAll(async () => {
  await app?.close();
});

/** Clicks New, discarding unsaved changes if asked. */
async function newDraft(): Promise<void> {
  const { page } = app;
  await page.getByTestId('new-workflow').click();
  const discard = page.getByTestId('unsaved-discard');
  if (await discard.isVisible().catch(() => false)) await discard.click();
  await page.locator('[data-testid="view-designer"][data-workflow=""]').waitFor();
}

async function savedNames(): Promise<string[]> {
  return (await app.api<Array<{ name: string }>>('workflow:list')).map((w) => w.name);
}

describe('a new draft', () => {
  it('an empty canvas says how to begin, lets a drop through, and says nothing once a node is there', async () => {
    const { page } = app;
    await newDraft();
    const hint = page.getByTestId('canvas-empty-hint');
    await hint.waitFor();
    expect(await hint.textContent()).toMatch(/Drag a node from the palette/);
    // the hint lies over the canvas's middle, where a drop lands: the drop still makes a node
    const id = await dragFromPalette(page, 'pass');
    expect(id).toBeTruthy();
    await hint.waitFor({ state: 'detached' });
    // and a read-only canvas or one with nodes never shows it
    expect(await hint.count()).toBe(0);
  });

  it('"New" then Save asks for a name, checks it, and saves under it (never as "untitled")', async () => {
    const { page } = app;
    await newDraft();
    await dragFromPalette(page, 'pass');
    // when: Save is clicked on the draft that still has the name it gave itself
    await page.getByTestId('save-workflow').click();
    // then: a dialog asks for the name; nothing is saved yet
    const dialog = page.getByTestId('save-name-dialog');
    await dialog.waitFor();
    expect(await savedNames()).toEqual(['purchase-approval']);
    expect(await dialog.getByTestId('name-dialog-ok').isDisabled()).toBe(true);
    // Escape closes it, still unsaved
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await page.getByTestId('view-designer').getAttribute('data-dirty')).toBe('true');
    // Ctrl+S asks too
    await page.getByTestId('designer-canvas').click({ position: { x: 10, y: 10 } });
    await page.keyboard.press(`${mod}+s`);
    await dialog.waitFor();
    // a name that is taken is refused, in place
    await dialog.getByTestId('name-dialog-input').fill('purchase-approval');
    await dialog.getByTestId('name-dialog-ok').click();
    expect(await dialog.getByTestId('name-dialog-error').textContent()).toMatch(/already exists/);
    // as is a name of spaces only, or one with a control character
    await dialog.getByTestId('name-dialog-input').fill('   ');
    expect(await dialog.getByTestId('name-dialog-ok').isDisabled()).toBe(true);
    await dialog.getByTestId('name-dialog-input').fill('a\u0007b');
    await dialog.getByTestId('name-dialog-ok').click();
    expect(await dialog.getByTestId('name-dialog-error').textContent()).toMatch(/control characters/);
    // a free name saves it under that name
    await dialog.getByTestId('name-dialog-input').fill('orders');
    await dialog.getByTestId('name-dialog-input').press('Enter');
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => page.getByTestId('designer-message-text').textContent()).toBe('Saved orders as version 1');
    expect((await savedNames()).sort()).toEqual(['orders', 'purchase-approval']);
    // and the next Save does not ask again
    await dragFromPalette(page, 'pass');
    await page.getByTestId('save-workflow').click();
    await expect.poll(() => page.getByTestId('designer-message-text').textContent()).toBe('Saved orders as version 2');
    expect(await dialog.count()).toBe(0);
  });

  it("a refused save's message belongs to its drawing: New leaves it behind", async () => {
    const { page } = app;
    await newDraft();
    // given: a save refused for a problem (a Delay without a duration)
    await dragFromPalette(page, 'delay');
    await page.getByTestId('save-workflow').click();
    await expect.poll(() => page.getByTestId('designer-message-text').textContent()).toBe('Cannot save: 1 problem to fix first (see Problems)');
    // when: New is clicked (the drawing discarded)
    await newDraft();
    // then: the new, empty draft shows no message about the one before
    await page.getByTestId('canvas-empty-hint').waitFor();
    expect(await page.getByTestId('designer-message').count()).toBe(0);
  });

  it('the input-variable list sets a string\'s minLength and pattern, and refuses a pattern that does not compile', async () => {
    const { page } = app;
    await newDraft();
    await dragFromPalette(page, 'pass');
    await openWorkflowSettings(page);
    await page.getByTestId('prop-workflow-name').fill('coded');
    await page.getByTestId('input-field-add').click();
    await page.getByTestId('input-field-0-name').fill('code');
    await page.getByTestId('input-field-0-name').press('Enter');
    // when: a least length and a pattern are set
    await page.getByTestId('input-field-0-minLength').fill('3');
    await page.getByTestId('input-field-0-minLength').press('Enter');
    await page.getByTestId('input-field-0-pattern').fill('([');
    // then: a pattern that does not compile is named and not kept
    await page.getByTestId('input-field-0-pattern-error').waitFor();
    await page.getByTestId('input-field-0-pattern').press('Enter');
    await page.getByTestId('input-field-0-pattern').fill('^[A-Z]{3}-\\d+$');
    await page.getByTestId('input-field-0-pattern').press('Enter');
    await page.getByTestId('input-field-0-pattern-error').waitFor({ state: 'detached' });
    await page.getByTestId('save-workflow').click();
    await expect.poll(() => page.getByTestId('designer-message-text').textContent()).toBe('Saved coded as version 1');
    // and the saved schema has them
    const saved = await app.api<{ definition: { inputSchema?: unknown } }>('workflow:get', { name: 'coded' });
    expect(saved.definition.inputSchema).toEqual({
      type: 'object',
      properties: { code: { type: 'string', minLength: 3, pattern: '^[A-Z]{3}-\\d+$' } },
      required: ['code'],
    });
    // and the engine applies them
    const refused = await app.call('instance:start', { workflow: 'coded', variables: { code: 'ab' } });
    expect(refused.ok).toBe(false);
    const started = await app.call('instance:start', { workflow: 'coded', variables: { code: 'ABC-12' } });
    expect(started.ok).toBe(true);
    expect(app.consoleErrors).toEqual([]);
  });
});
