// A script's errors where the user wrote them, in real Chromium through the browser host (issue 15,
// item 10): the Designer's script field names a syntax error's line and column in the code itself
// (line 1 without the sandbox's wrapper, code that ends too early at its end, not on a line 2 the
// user never wrote), and the instance view names a runtime error's line on line 3.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addNode, canvasCentre, nodeAt, startDesignerApp, type DesignerApp } from '../../helpers/designer-e2e';

let app: DesignerApp;

const THROWS_ON_LINE_3 = {
  format: 1,
  name: 'throws-on-line-3',
  nodes: [{ id: 'calc', type: 'script', config: { code: 'const a = 1;\nconst b = a + 1;\nthrow new Error("no " + b);' } }],
  edges: [],
};

beforeAll(async () => {
  app = await startDesignerApp({ deploy: [THROWS_ON_LINE_3] });
});
afterAll(async () => {
  await app?.close();
});

describe('script errors', () => {
  it('the script field places a syntax error on line 1, on line 3, and at the end of the code', async () => {
    const { page } = app;
    await page.getByTestId('new-workflow').click();
    await page.getByTestId('unsaved-discard').click({ timeout: 2000 }).catch(() => undefined);
    const c = await canvasCentre(page);
    await addNode(page, 'script', 'calc', { x: c.x, y: c.y });
    const code = page.getByTestId('prop-config-code');
    const error = page.getByTestId('prop-config-code-error');
    // given a one-line script with an unexpected ";" at column 11
    await code.fill('const x = ;');
    await expect.poll(() => error.textContent()).toMatch(/^Line 1, column 11: Unexpected token/);
    // given the same on the third line
    await code.fill('const a = 1;\nconst b = 2;\nconst c = ;');
    await expect.poll(() => error.textContent()).toMatch(/^Line 3, column 11: /);
    // given one line that ends inside a bracket: its end, not the wrapper's line 2
    await code.fill('return (');
    await expect.poll(() => error.textContent()).toBe('Line 1, column 9: the code ends too early (an unclosed bracket, string or expression)');
    // and the node's problem, as the engine's save would name it, has the same place
    await expect.poll(() => page.getByTestId('problem-0').textContent()).toContain('line 1, column 9: the code ends too early');
    // once fixed, nothing is left
    await code.fill('return 1');
    await expect.poll(() => error.count()).toBe(0);
    await expect.poll(() => nodeAt(page, 'calc').locator('[data-testid="badge-problems"]').count()).toBe(0);
  });

  it('the instance view names the line of a runtime error on line 3', async () => {
    const { page } = app;
    // given an instance whose script threw on its third line
    const { id } = await app.api<{ id: number }>('instance:start', { workflow: 'throws-on-line-3' });
    await expect
      .poll(async () => (await app.api<{ status: string }>('instance:get', { id })).status, { timeout: 15_000 })
      .toBe('FAILED');
    const detail = await app.api<{ nodes: Array<{ id: string; error?: { details?: unknown } }> }>('instance:get', { id });
    expect(detail.nodes.find((n) => n.id === 'calc')?.error?.details).toMatchObject({ line: 3, column: 16 });
    // when its node is opened in the instance view
    await page.evaluate((n) => {
      window.location.hash = `#/instances/${n}`;
    }, id);
    await page.getByTestId('graph-node-calc').click();
    // then its error says where
    await expect.poll(() => page.getByTestId('node-error').textContent()).toMatch(/SCRIPT_ERROR: script threw Error: no 2 \(line 3, column 16\)$/);
  });
});
