// The Designer in real Chromium through the browser host: draw every node type from the palette,
// connect, set properties, save — the version in the database is what was drawn; connection
// rules refuse a cycle in place; an invalid `when` shows its parse error; a workflow with
// problems is not saved and the problem list names them; emoji and CJK survive save, export and
// import.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { canonicalJson, normalizeWorkflow } from '../../../engine/dsl';
import {
  addNode,
  canvasCentre,
  connect,
  dragConnection,
  exportViaUi,
  importViaUi,
  nodeAt,
  openWorkflowSettings,
  saveViaUi,
  selectNode,
  startDesignerApp,
  type DesignerApp,
} from '../../helpers/designer-e2e';

let app: DesignerApp;

beforeAll(async () => {
  app = await startDesignerApp();
});

afterAll(async () => {
  await app?.close();
});

/** Normalised definition without `ui`, for comparing meaning. */
function meaning(def: unknown): string {
  const n = normalizeWorkflow(def) as Record<string, unknown>;
  delete n['ui'];
  return canonicalJson(n);
}

async function edgeCount(): Promise<number> {
  return app.page.locator('.react-flow__edge').count();
}

/** Selects the edge with canvas id `id` (a click on its path). */
async function selectEdge(id: string): Promise<void> {
  await app.page.locator(`.react-flow__edge[data-id="${id}"] path.react-flow__edge-interaction`).dispatchEvent('click');
  await app.page.locator('[data-testid="properties-panel"][data-selection="edge"]').waitFor();
}

describe('the Designer draws, checks and saves workflows', () => {
  it('drags every node type from the palette, connects them, sets properties, and saves exactly that', async () => {
    const { page } = app;
    await page.getByTestId('new-workflow').click();
    // The control-flow types (group Flow: subworkflow, map, event) call deployed workflows and
    // wait for events; test/e2e/designer/control-flow.test.ts draws them.
    const all = await app.api<Output<'node:types'>>('node:types');
    expect(all.filter((t) => t.group === 'Flow').map((t) => t.type)).toEqual(['subworkflow', 'map', 'event']);
    const types = all.filter((t) => t.group !== 'Flow');
    expect(types.map((t) => t.type)).toEqual(['pass', 'script', 'http', 'delay', 'approval', 'csv.read', 'sqlite.load']);
    // given: one node of each type, dropped in a grid
    const box = (await page.getByTestId('designer-canvas').boundingBox())!;
    const ids: string[] = [];
    for (const [i, t] of types.entries()) {
      const at = { x: box.x + 110 + (i % 4) * 215, y: box.y + 80 + Math.floor(i / 4) * 170 };
      ids.push(await addNode(page, t.type, `n-${t.type.replace('.', '-')}`, at));
      await expect.poll(() => nodeAt(page, ids[i]!).getAttribute('class')).toContain('selected');
    }
    expect(await page.locator('.react-flow__node').count()).toBe(types.length);
    for (const [i, t] of types.entries()) expect(await nodeAt(page, ids[i]!).locator('[data-type]').getAttribute('data-type')).toBe(t.type);

    // when: properties are set through the panel
    await selectNode(page, 'n-pass');
    await page.getByTestId('prop-name').fill('Start here');
    await page.getByTestId('prop-config-result').fill('{"ok": true}');
    await selectNode(page, 'n-script');
    await page.getByTestId('prop-config-code').fill('return { n: 1 };');
    // the retry fields take their bounds from the DSL's schema: no ceiling on the coefficient
    await page.getByTestId('prop-retry-maxAttempts').fill('1001');
    await expect.poll(() => page.getByTestId('prop-retry-maxAttempts-error').textContent()).toBe('Must be at most 1000');
    await page.getByTestId('prop-retry-maxAttempts').fill('4');
    await page.getByTestId('prop-retry-backoffCoefficient').fill('0.5');
    await expect.poll(() => page.getByTestId('prop-retry-backoffCoefficient-error').textContent()).toBe('Must be at least 1');
    await page.getByTestId('prop-retry-backoffCoefficient').fill('1000');
    await expect.poll(() => page.getByTestId('prop-retry-backoffCoefficient-error').count()).toBe(0);
    await selectNode(page, 'n-http');
    await page.getByTestId('prop-config-url').fill('https://example.test/{{ id }}');
    await page.getByTestId('prop-config-method').selectOption('POST');
    await page.getByTestId('prop-timeoutMs').fill('5000');
    await page.getByTestId('prop-output').fill('reply');
    await selectNode(page, 'n-delay');
    await page.getByTestId('prop-config-durationMs').fill('250');
    await selectNode(page, 'n-approval');
    await page.getByTestId('prop-config-prompt').fill('Go on?');
    await page.getByTestId('prop-onFailure').selectOption('suspend');
    await selectNode(page, 'n-csv-read');
    await page.getByTestId('prop-config-file').fill('orders.csv');
    await selectNode(page, 'n-sqlite-load');
    await page.getByTestId('prop-config-file').fill('out.db');
    await page.getByTestId('prop-config-table').fill('orders');
    await page.getByTestId('prop-config-key').fill('order_id');
    await page.getByTestId('prop-compensate').check();
    await page.getByTestId('prop-compensate-type').selectOption('pass');
    // and connected handle to handle: a chain, one error edge with a condition
    await page.getByTestId('fit-view').click();
    await page.waitForTimeout(250);
    await connect(page, 'n-pass', 'n-script');
    await connect(page, 'n-script', 'n-http');
    await connect(page, 'n-http', 'n-delay');
    await connect(page, 'n-http', 'n-approval', 'error');
    await connect(page, 'n-csv-read', 'n-sqlite-load');
    expect(await edgeCount()).toBe(5);
    await selectEdge('n-http-!>n-approval');
    await page.getByTestId('prop-when').fill("$error.code = 'HTTP_ERROR'");
    await openWorkflowSettings(page);
    await page.getByTestId('prop-workflow-name').fill('drawn');
    await expect.poll(() => page.getByTestId('problems-count').textContent()).toBe('0');
    // then: saved as version 1, and the database holds what was drawn
    expect(await saveViaUi(page)).toBe('Saved drawn as version 1');
    const saved = await app.api<Output<'workflow:get'>>('workflow:get', { name: 'drawn' });
    expect(meaning(saved.definition)).toBe(
      meaning({
        format: 1,
        name: 'drawn',
        nodes: [
          { id: 'n-pass', type: 'pass', name: 'Start here', config: { result: { ok: true } } },
          { id: 'n-script', type: 'script', config: { code: 'return { n: 1 };' }, retry: { maxAttempts: 4, backoffCoefficient: 1000 } },
          { id: 'n-http', type: 'http', config: { url: 'https://example.test/{{ id }}', method: 'POST' }, output: 'reply', timeoutMs: 5000 },
          { id: 'n-delay', type: 'delay', config: { durationMs: 250 } },
          { id: 'n-approval', type: 'approval', config: { prompt: 'Go on?' }, onFailure: 'suspend' },
          { id: 'n-csv-read', type: 'csv.read', config: { file: 'orders.csv' } },
          { id: 'n-sqlite-load', type: 'sqlite.load', config: { file: 'out.db', table: 'orders', key: 'order_id' }, compensate: { type: 'pass' } },
        ],
        edges: [
          { from: 'n-pass', to: 'n-script' },
          { from: 'n-script', to: 'n-http' },
          { from: 'n-http', to: 'n-delay' },
          { from: 'n-http', to: 'n-approval', on: 'error', when: "$error.code = 'HTTP_ERROR'" },
          { from: 'n-csv-read', to: 'n-sqlite-load' },
        ],
      }),
    );
    // positions too: the export of the drawing is the saved version, ui included
    const exported = JSON.parse(await exportViaUi(page)) as unknown;
    expect(canonicalJson(normalizeWorkflow(saved.definition))).toBe(canonicalJson(normalizeWorkflow(exported)));
    expect(Object.keys((saved.definition.ui?.positions ?? {}) as object)).toHaveLength(7);
    expect(await page.getByTestId('view-designer').getAttribute('data-dirty')).toBe('false');
    // saving again without a change makes no version
    expect(await saveViaUi(page)).toMatch(/still version 1/);
  });

  it('refuses a connection that would close a cycle, saying why in place', async () => {
    const { page } = app;
    // given: n-pass → n-script → n-http (drawn above)
    const before = await edgeCount();
    // when: dragging from n-http's output onto n-pass's input
    await dragConnection(page, 'n-http', 'n-pass', { release: false });
    // then: refused while dragging, with the cycle's path
    const reason = page.getByTestId('connection-refused-reason');
    await expect.poll(() => reason.textContent()).toBe('Refused: it would make a cycle "n-pass" → "n-script" → "n-http" → "n-pass"');
    await page.mouse.up();
    // and after the drop: no edge, the reason stays on screen for a moment
    await expect.poll(() => reason.textContent()).toMatch(/cycle/);
    expect(await edgeCount()).toBe(before);
    // a self-loop and a duplicate are refused the same way
    await dragConnection(page, 'n-pass', 'n-script');
    await expect.poll(() => reason.textContent()).toMatch(/already exists/);
    expect(await edgeCount()).toBe(before);
  });

  it('shows an invalid `when` as its parse error, inline and in the problem list', async () => {
    const { page } = app;
    await selectEdge('n-pass->n-script');
    await page.getByTestId('prop-when').fill('status = = 1');
    await expect.poll(() => page.getByTestId('prop-when-error').textContent()).toMatch(/at character/);
    await expect.poll(() => page.getByTestId('problem-0').getAttribute('data-code')).toBe('EXPRESSION_PARSE');
    expect(await page.getByTestId('problem-0').textContent()).toMatch(/edge "n-pass->n-script": when does not parse/);
    await page.getByTestId('prop-when').fill('status = 1');
    await expect.poll(() => page.getByTestId('prop-when-error').count()).toBe(0);
    await expect.poll(() => page.getByTestId('problems-count').textContent()).toBe('0');
  });

  it('refuses to save a workflow with problems, naming each in the problem list', async () => {
    const { page } = app;
    // given: a new draft with an http node without url and a script that does not parse
    await page.getByTestId('new-workflow').click();
    await page.getByTestId('unsaved-discard').click({ timeout: 2000 }).catch(() => undefined);
    const c = await canvasCentre(page);
    await addNode(page, 'http', 'fetch', { x: c.x - 150, y: c.y });
    await addNode(page, 'script', 'calc', { x: c.x + 150, y: c.y });
    await page.getByTestId('prop-config-code').fill('return (1 +;');
    await expect.poll(() => page.getByTestId('prop-config-code-error').textContent()).toMatch(/Line 1, column 12/);
    await openWorkflowSettings(page);
    await page.getByTestId('prop-workflow-name').fill('broken');
    // when
    await page.getByTestId('save-workflow').click();
    // then
    await expect.poll(() => page.getByTestId('designer-message').textContent()).toMatch(/Cannot save: 2 problems/);
    const items = await page.locator('[data-testid^="problem-"]').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-code')} ${e.getAttribute('data-node')}`));
    expect(items).toEqual(['INVALID_CONFIG fetch', 'INVALID_CONFIG calc']);
    expect(await page.getByTestId('problem-0').textContent()).toMatch(/node "fetch": config\.url/);
    expect((await app.api<Output<'workflow:list'>>('workflow:list')).map((w) => w.name)).not.toContain('broken');
    // a problem is marked on its node, and clicking it selects the node
    expect(await nodeAt(page, 'fetch').locator('[data-testid="badge-problems"]').textContent()).toBe('1');
    await page.getByTestId('problem-0').click();
    await expect.poll(() => page.getByTestId('prop-id').inputValue()).toBe('fetch');
  });

  it('keeps emoji and CJK names and ids through save, export and import', async () => {
    const { page } = app;
    await page.getByTestId('new-workflow').click();
    await page.getByTestId('unsaved-discard').click();
    const c = await canvasCentre(page);
    await addNode(page, 'pass', '检查', { x: c.x - 150, y: c.y });
    await page.getByTestId('prop-name').fill('检查 ✅');
    await addNode(page, 'delay', '🚀发射', { x: c.x + 150, y: c.y });
    await page.getByTestId('prop-name').fill('発射 🚀 待つ');
    await page.getByTestId('prop-config-durationMs').fill('10');
    await connect(page, '检查', '🚀发射');
    await openWorkflowSettings(page);
    await page.getByTestId('prop-workflow-name').fill('ワークフロー 🌊');
    expect(await saveViaUi(page)).toBe('Saved ワークフロー 🌊 as version 1');
    // the database has them
    const saved = await app.api<Output<'workflow:get'>>('workflow:get', { name: 'ワークフロー 🌊' });
    expect(saved.definition.nodes.map((n) => [n.id, n.name])).toEqual([
      ['检查', '检查 ✅'],
      ['🚀发射', '発射 🚀 待つ'],
    ]);
    expect(saved.definition.edges).toEqual([{ from: '检查', to: '🚀发射' }]);
    expect(Object.keys(saved.definition.ui?.positions ?? {})).toEqual(['检查', '🚀发射']);
    // export, then import that file: the same drawing, ids and names intact
    const text = await exportViaUi(page);
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(saved.definition)));
    await page.getByTestId('new-workflow').click();
    await importViaUi(page, text);
    expect(await page.getByTestId('workflow-title').textContent()).toBe('ワークフロー 🌊');
    expect(await nodeAt(page, '🚀发射').textContent()).toContain('発射 🚀 待つ');
    expect(JSON.parse(await exportViaUi(page))).toEqual(JSON.parse(text));
  });

  it('ran without page errors or CSP violations', () => {
    expect(app.consoleErrors).toEqual([]);
  });
});
