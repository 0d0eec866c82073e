// The control-flow node types in the Designer (issue 12), in real Chromium through the browser
// host: the palette lists subworkflow, map and event with their own icons; a subworkflow's
// workflow is picked from the deployed workflows (its version from that workflow's versions) and
// saves; a call of a workflow that is not deployed is the engine's UNKNOWN_WORKFLOW problem, with
// a badge on the node, and Save is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { addNode, canvasCentre, importViaUi, nodeAt, openWorkflowSettings, saveViaUi, startDesignerApp, type DesignerApp } from '../../helpers/designer-e2e';

let app: DesignerApp;

/** A workflow to call: one event node. */
const child = (name: string) => ({ format: 1, name, nodes: [{ id: 'wait', type: 'event', config: { name: 'go' } }], edges: [] });

beforeAll(async () => {
  // given: two workflows deployed, the second in two versions
  app = await startDesignerApp({ deploy: [child('device-upgrade'), child('notify'), { ...child('notify'), description: 'v2' }] });
});

afterAll(async () => {
  await app?.close();
});

/** The `d` of the icon drawn in palette item `type`. */
function iconPath(type: string): Promise<string | null> {
  return app.page.getByTestId(`palette-item-${type}`).locator('svg path').getAttribute('d');
}

describe('designer: control-flow node types', () => {
  it('the palette lists subworkflow, map and event, each with its own icon', async () => {
    const { page } = app;
    const flow = page.getByTestId('palette-group-Flow');
    for (const type of ['subworkflow', 'map', 'event']) await flow.getByTestId(`palette-item-${type}`).waitFor();
    const paths = await Promise.all(['subworkflow', 'map', 'event', 'pass'].map(iconPath));
    // the unknown-name fallback is the box; none of the three draws it, and no two draw the same
    const fallback = 'M4 8l8-4 8 4v8l-8 4-8-4zM4 8l8 4 8-4M12 12v8';
    expect(paths.slice(0, 3)).not.toContain(fallback);
    expect(new Set(paths).size).toBe(4);
  });

  it('a subworkflow picks a deployed workflow and version and saves; a call of one not deployed is UNKNOWN_WORKFLOW', async () => {
    const { page } = app;
    // given: a new drawing (the Designer opened the first workflow)
    await page.getByTestId('new-workflow').click();
    await page.getByTestId('unsaved-discard').click({ timeout: 2000 }).catch(() => undefined);
    const c = await canvasCentre(page);
    // when: a subworkflow node is dropped
    await addNode(page, 'subworkflow', 'call', { x: c.x, y: c.y });
    // then: its workflow field lists the deployed workflows
    const picker = page.getByTestId('prop-config-workflow');
    expect(await picker.evaluate((el) => el.tagName)).toBe('SELECT');
    const options = await picker.locator('option').evaluateAll((els) => els.map((e) => e.getAttribute('value')));
    expect(options).toEqual(['', 'device-upgrade', 'notify']);
    // when: notify is picked, then its version 1
    await picker.selectOption('notify');
    const version = page.getByTestId('prop-config-version');
    expect(await version.locator('option').evaluateAll((els) => els.map((e) => e.textContent))).toEqual(['latest when the node starts', 'v2', 'v1']);
    await version.selectOption('1');
    await expect.poll(() => nodeAt(page, 'call').textContent()).toContain('runs notify v1');
    // and the workflow is named and saved
    await openWorkflowSettings(page);
    await page.getByTestId('prop-workflow-name').fill('caller');
    expect(await saveViaUi(page)).toBe('Saved caller as version 1');
    const saved = await app.api<Output<'workflow:get'>>('workflow:get', { name: 'caller' });
    expect(saved.definition.nodes[0]).toMatchObject({ id: 'call', type: 'subworkflow', config: { workflow: 'notify', version: 1 } });

    // when: a drawing calling a workflow that is not deployed is imported
    await importViaUi(page, JSON.stringify({ format: 1, name: 'caller-of-nothing', nodes: [{ id: 'call', type: 'subworkflow', config: { workflow: 'no-such-flow' } }], edges: [] }));
    // then: the host's validation names it on the node, with a badge
    await expect.poll(() => page.locator('[data-testid^="problem-"][data-code="UNKNOWN_WORKFLOW"]').count(), { timeout: 5000 }).toBe(1);
    const problem = page.locator('[data-testid^="problem-"][data-code="UNKNOWN_WORKFLOW"]');
    expect(await problem.getAttribute('data-node')).toBe('call');
    expect(await problem.textContent()).toContain('workflow "no-such-flow" is not deployed');
    expect(await nodeAt(page, 'call').locator('[data-testid="badge-problems"]').textContent()).toBe('1');
    // and the picker shows the name, marked
    await nodeAt(page, 'call').click();
    expect(await page.getByTestId('prop-config-workflow').inputValue()).toBe('no-such-flow');
    expect(await page.locator('[data-testid="prop-config-workflow"] option:checked').textContent()).toBe('no-such-flow (not deployed)');
    // and Save is refused
    await page.getByTestId('save-workflow').click();
    await expect.poll(() => page.getByTestId('designer-message-text').textContent()).toMatch(/^Cannot save: 1 problem/);
    expect((await app.api<Output<'workflow:list'>>('workflow:list')).map((w) => w.name)).not.toContain('caller-of-nothing');
  });
});
