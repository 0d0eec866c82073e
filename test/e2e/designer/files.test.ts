// Files, versions and the workflow's life in the Designer, in real Chromium through the browser
// host: every example imports and exports unchanged (positions included), C10, a file dropped on
// the window, save making versions only on change, earlier versions read-only and restorable, the
// unsaved-changes guard, rename, duplicate, delete (refused while an instance is live), and Run.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { canonicalJson, normalizeWorkflow } from '../../../engine/dsl';
import { addNode, canvasCentre, EXAMPLES, exampleText, exportViaUi, importViaUi, nodeAt, openWorkflowSettings, saveViaUi, startDesignerApp, type DesignerApp } from '../../helpers/designer-e2e';

let app: DesignerApp;

beforeAll(async () => {
  app = await startDesignerApp({ deploy: [JSON.parse(exampleText('purchase-approval'))] });
});

afterAll(async () => {
  await app?.close();
});

const normal = (def: unknown): string => canonicalJson(normalizeWorkflow(def));

/** Clicks New, discarding unsaved changes if asked. */
async function newDraft(page: Page): Promise<void> {
  await page.getByTestId('new-workflow').click();
  const discard = page.getByTestId('unsaved-discard');
  if (await discard.isVisible()) await discard.click();
  await page.locator('[data-testid="view-designer"][data-dirty="false"][data-workflow=""]').waitFor();
}

async function openFromSidebar(page: Page, name: string): Promise<void> {
  await page.getByTestId(`workflow-item-${name}`).click();
  await page.locator(`[data-testid="view-designer"][data-workflow="${name}"]`).waitFor();
}

describe('import, export and C10', () => {
  it.each(EXAMPLES)('%s: import → export is byte-equal after normalisation, positions included', async (name) => {
    const { page } = app;
    const text = exampleText(name);
    await newDraft(page);
    await importViaUi(page, text);
    const out = JSON.parse(await exportViaUi(page)) as { ui: unknown };
    const original = JSON.parse(text) as { ui: unknown };
    expect(normal(out)).toBe(normal(original));
    expect(out.ui).toEqual(original.ui);
    expect(await page.getByTestId('problems-count').textContent()).toBe('0');
  });

  it('C10 — designer: import/export keeps positions', async () => {
    const { page } = app;
    // given: a workflow whose ui.positions are set (off-grid, negative, fractional)
    const file = {
      name: 'c10',
      nodes: [
        { id: 'a', type: 'pass' },
        { id: 'b', type: 'delay', config: { durationMs: 5 } },
        { id: 'c', type: 'pass' },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'a', to: 'c', when: 'x > 1' },
      ],
      ui: { positions: { a: { x: -33, y: 17.5 }, b: { x: 250, y: -90 }, c: { x: 251, y: 130 } } },
    };
    await newDraft(page);
    await importViaUi(page, JSON.stringify(file));
    // when: nothing moves, and it is exported
    const first = await exportViaUi(page);
    // then: positions equal the imported ones
    expect((JSON.parse(first) as typeof file).ui.positions).toEqual(file.ui.positions);
    // and import → export → import → export is stable, to the byte
    await importViaUi(page, first);
    const second = await exportViaUi(page);
    expect(second).toBe(first);
  });

  it('imports YAML, and a file dropped on the window', async () => {
    const { page } = app;
    await newDraft(page);
    await importViaUi(page, 'name: from-yaml\nnodes:\n  - id: only\n    type: pass\n');
    expect(await page.getByTestId('workflow-title').textContent()).toBe('from-yaml');
    await nodeAt(page, 'only').waitFor();
    // a syntax error is shown where it is, and nothing changes
    await page.getByTestId('import-workflow').click();
    await page.getByTestId('import-text').fill('{ "name": "x", ');
    await page.getByTestId('import-confirm').click();
    await expect.poll(() => page.getByTestId('import-error').textContent()).toMatch(/workflow:1:\d+: invalid JSON/);
    await page.getByTestId('import-cancel').click();
    // a dropped file opens (after the unsaved-changes question)
    const text = exampleText('ota-upgrade');
    await page.getByTestId('view-designer').evaluate((el, body) => {
      const data = new DataTransfer();
      data.items.add(new File([body], 'ota-upgrade.workflow.json', { type: 'application/json' }));
      el.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
      el.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    }, text);
    await page.getByTestId('unsaved-discard').click();
    await nodeAt(page, 'verify').waitFor();
    expect(await page.getByTestId('workflow-title').textContent()).toBe('ota-upgrade');
    expect(normal(JSON.parse(await exportViaUi(page)))).toBe(normal(JSON.parse(text)));
  });
});

describe('versions and the workflow life cycle', () => {
  it('saves a version only on change; keeps moved positions; shows earlier versions read-only and restores one', async () => {
    const { page } = app;
    await newDraft(page);
    const c = await canvasCentre(page);
    await addNode(page, 'pass', 'first', { x: c.x - 150, y: c.y });
    await openWorkflowSettings(page);
    await page.getByTestId('prop-workflow-name').fill('versioned');
    expect(await saveViaUi(page)).toBe('Saved versioned as version 1');
    // a change makes version 2
    await addNode(page, 'pass', 'second', { x: c.x + 150, y: c.y });
    expect(await page.getByTestId('unsaved-marker').isVisible()).toBe(true);
    expect(await saveViaUi(page)).toBe('Saved versioned as version 2');
    // moving a node only: no version, but the layout is kept
    const box = (await nodeAt(page, 'second').boundingBox())!;
    await page.mouse.move(box.x + 30, box.y + 20);
    await page.mouse.down();
    await page.mouse.move(box.x + 30, box.y + 120, { steps: 6 });
    await page.mouse.up();
    expect(await saveViaUi(page)).toMatch(/still version 2 \(layout saved\)/);
    const latest = await app.api<Output<'workflow:get'>>('workflow:get', { name: 'versioned' });
    expect(latest.version).toBe(2);
    expect(latest.definition.ui?.positions?.['second']).toEqual((JSON.parse(await exportViaUi(page)) as { ui: { positions: Record<string, unknown> } }).ui.positions['second']);
    // version 1, read-only
    await page.getByTestId('version-picker').selectOption('1');
    await page.getByTestId('readonly-banner').waitFor();
    await expect.poll(() => page.locator('.react-flow__node').count()).toBe(1);
    expect(await page.getByTestId('save-workflow').isDisabled()).toBe(true);
    expect(await page.getByTestId('palette-item-pass').isDisabled()).toBe(true);
    await page.keyboard.press('Control+a');
    await page.keyboard.press('Delete');
    expect(await page.locator('.react-flow__node').count()).toBe(1);
    // restored as version 3, equal in meaning to version 1
    await page.getByTestId('restore-version').click();
    await expect.poll(() => page.getByTestId('designer-message-text').textContent()).toBe('Restored version 1 as version 3');
    await page.getByTestId('readonly-banner').waitFor({ state: 'detached' });
    const [v1, v3] = await Promise.all([1, 3].map((version) => app.api<Output<'workflow:get'>>('workflow:get', { name: 'versioned', version })));
    const meaning = (d: unknown) => {
      const n = normalizeWorkflow(d) as Record<string, unknown>;
      delete n['ui'];
      return canonicalJson(n);
    };
    expect(meaning(v3!.definition)).toBe(meaning(v1!.definition));
    expect((await app.api<Output<'workflow:versions'>>('workflow:versions', { name: 'versioned' })).map((v) => v.version)).toEqual([3, 2, 1]);
  });

  it('guards unsaved changes when switching workflow: stay keeps them, discard switches', async () => {
    const { page } = app;
    await openFromSidebar(page, 'versioned');
    await addNode(page, 'pass', 'unsaved-one');
    await page.getByTestId('workflow-item-purchase-approval').click();
    await page.getByTestId('unsaved-dialog').waitFor();
    await page.getByTestId('unsaved-cancel').click();
    expect(await page.getByTestId('view-designer').getAttribute('data-workflow')).toBe('versioned');
    expect(await page.getByTestId('workflow-item-versioned').getAttribute('aria-pressed')).toBe('true');
    await nodeAt(page, 'unsaved-one').waitFor();
    await page.getByTestId('workflow-item-purchase-approval').click();
    await page.getByTestId('unsaved-discard').click();
    await page.locator('[data-testid="view-designer"][data-workflow="purchase-approval"]').waitFor();
    await nodeAt(page, 'approve').waitFor();
  });

  it('renames and duplicates a workflow', async () => {
    const { page } = app;
    await openFromSidebar(page, 'versioned');
    await page.getByTestId('rename-workflow').click();
    await page.getByTestId('name-dialog-input').fill('purchase-approval');
    await page.getByTestId('name-dialog-ok').click();
    await expect.poll(() => page.getByTestId('name-dialog-error').textContent()).toMatch(/already exists/);
    await page.getByTestId('name-dialog-input').fill('renamed 🎉');
    await page.getByTestId('name-dialog-ok').click();
    await page.getByTestId('workflow-item-renamed 🎉').waitFor();
    expect(await page.getByTestId('workflow-title').textContent()).toBe('renamed 🎉');
    expect((await app.api<Output<'workflow:versions'>>('workflow:versions', { name: 'renamed 🎉' })).map((v) => v.version)).toEqual([3, 2, 1]);
    expect(await page.getByTestId('view-designer').getAttribute('data-dirty')).toBe('false');
    await page.getByTestId('duplicate-workflow').click();
    expect(await page.getByTestId('name-dialog-input').inputValue()).toBe('renamed 🎉-copy');
    await page.getByTestId('name-dialog-ok').click();
    await page.locator('[data-testid="view-designer"][data-workflow="renamed 🎉-copy"]').waitFor();
    const copy = await app.api<Output<'workflow:get'>>('workflow:get', { name: 'renamed 🎉-copy' });
    expect(copy.version).toBe(1);
    expect(copy.definition.nodes.map((n) => n.id)).toEqual(['first']);
  });

  it('runs the saved version with checked variables, then shows the instance', async () => {
    const { page } = app;
    await openFromSidebar(page, 'purchase-approval');
    await page.getByTestId('run-workflow').click();
    const vars = page.getByTestId('run-vars');
    expect(await page.getByTestId('run-fields').textContent()).toMatch(/requester \(string\), currency \(string\)/);
    await vars.fill('{ "requester": ');
    await page.getByTestId('run-start').click();
    await expect.poll(() => page.getByTestId('run-vars-error').textContent()).toMatch(/not valid JSON/);
    await vars.fill('{ "requester": "Ada", "currency": "euro" }');
    await page.getByTestId('run-start').click();
    await expect.poll(() => page.getByTestId('run-vars-error').textContent()).toMatch(/input schema:\ncurrency/);
    await vars.fill('{ "requester": "Ada" }');
    await page.getByTestId('run-start').click();
    await expect.poll(() => page.getByTestId('nav-instances').getAttribute('aria-selected')).toBe('true');
    const list = await app.api<Output<'instance:list'>>('instance:list', { workflow: 'purchase-approval' });
    expect(list.items).toHaveLength(1);
    expect(list.items[0]).toMatchObject({ workflow: 'purchase-approval', workflowVersion: 1 });
    await page.getByTestId('nav-designer').click();
    await page.locator('[data-testid="view-designer"][data-workflow="purchase-approval"]').waitFor();
  });

  it('refuses to delete a workflow while an instance is live; deletes it after', async () => {
    const { page } = app;
    // given: the instance started above waits for an approval
    const [live] = (await app.api<Output<'instance:list'>>('instance:list', { workflow: 'purchase-approval' })).items;
    await expect.poll(async () => (await app.api<Output<'instance:get'>>('instance:get', { id: live!.id })).status, { timeout: 10_000 }).toBe('WAITING');
    // when
    await page.getByTestId('delete-workflow').click();
    await page.getByTestId('confirm-ok').click();
    // then
    await expect.poll(() => page.getByTestId('designer-message-text').textContent()).toMatch(/Not deleted: .*1 live instance/);
    expect(await page.getByTestId('workflow-item-purchase-approval').count()).toBe(1);
    // after the instance ends, the delete goes through and another workflow opens
    await app.api('instance:cancel', { id: live!.id });
    await page.getByTestId('delete-workflow').click();
    await page.getByTestId('confirm-ok').click();
    await page.getByTestId('workflow-item-purchase-approval').waitFor({ state: 'detached' });
    await expect.poll(() => page.getByTestId('view-designer').getAttribute('data-workflow')).not.toBe('purchase-approval');
    expect((await app.api<Output<'workflow:list'>>('workflow:list')).map((w) => w.name)).not.toContain('purchase-approval');
  });

  it('ran without page errors or CSP violations', () => {
    // The refused calls above are reported as toasts (by design), not as page errors.
    expect(app.consoleErrors.filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
  });
});
