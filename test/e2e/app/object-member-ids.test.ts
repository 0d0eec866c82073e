// Node ids that are names of Object.prototype's members (`constructor`, `toString`,
// `hasOwnProperty`, `valueOf`, `__proto__`) are valid ids the engine runs; the app draws and works
// them like any other, in real Chromium through the browser host: the Designer opens such a
// workflow valid and saves and exports it unchanged, and the monitor shows such an instance (graph,
// timeline, history, each node's panel, the time-travel scrubber), all without a page error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstanceDetail, Output } from '../../../engine/api/contract';
import { exportViaUi, importViaUi, nodeAt, saveViaUi } from '../../helpers/designer-e2e';
import { openFromList, startMonitorApp, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

const IDS = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__'] as const;

// `ui.positions` cannot hold a `__proto__` key (the engine refuses one anywhere: PROTOTYPE_KEY),
// so that node has no saved position and is placed on open.
const flow = {
  format: 1,
  name: 'w-ctor',
  nodes: [
    { id: 'constructor', type: 'pass', config: { result: { n: 1 } }, output: 'constructor' },
    { id: 'toString', type: 'pass', config: { result: 'text' }, output: 'toString' },
    { id: 'hasOwnProperty', type: 'pass' },
    { id: 'valueOf', type: 'pass', config: { result: 2 }, output: 'valueOf' },
    { id: '__proto__', type: 'pass' },
  ],
  edges: [
    { from: 'constructor', to: 'toString' },
    { id: 'toString', from: 'toString', to: 'hasOwnProperty' },
    { from: 'hasOwnProperty', to: 'valueOf' },
    { id: 'valueOf', from: 'valueOf', to: '__proto__' },
  ],
  ui: {
    positions: {
      constructor: { x: 0, y: 0 },
      toString: { x: 240, y: 0 },
      hasOwnProperty: { x: 0, y: 160 },
      valueOf: { x: 240, y: 160 },
    },
  },
};

let app: MonitorApp;

beforeAll(async () => {
  app = await startMonitorApp({ prepare: async (engine) => void (await engine.deploy(flow)) });
});
afterAll(async () => {
  await app?.close();
});

const nodeIdsOnCanvas = () =>
  app.page.locator('.react-flow__node').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')).sort());

describe('ids that are names of Object.prototype members', () => {
  it('the Designer draws the workflow valid, saves it and exports it unchanged', async () => {
    const { page } = app;
    // when: the workflow is opened in the Designer
    await page.goto(`${app.server.url.split('?')[0]}#/designer/w-ctor`);
    await page.locator('[data-testid="view-designer"][data-workflow="w-ctor"]').waitFor();
    // then: every node is drawn, with its edges, and the validator finds nothing
    await expect.poll(nodeIdsOnCanvas).toEqual([...IDS].sort());
    await expect.poll(() => page.locator('.react-flow__edge').count()).toBe(4);
    await expect.poll(() => page.getByTestId('problems-count').textContent()).toBe('0');
    expect(await page.getByTestId('workflow-title').textContent()).toContain('w-ctor');
    // and each node opens in the properties panel under its own id
    for (const id of IDS) {
      await nodeAt(page, id).click();
      await expect.poll(() => page.getByTestId('prop-id').inputValue()).toBe(id);
    }

    // when: exported, the file has every node and edge, and the saved positions as they were
    const exported = JSON.parse(await exportViaUi(page)) as typeof flow;
    expect(exported.nodes).toEqual(flow.nodes);
    expect(exported.edges).toEqual(flow.edges);
    expect(Object.keys(exported.ui.positions).sort()).toEqual(['constructor', 'hasOwnProperty', 'toString', 'valueOf']);
    for (const [id, at] of Object.entries(flow.ui.positions))
      expect(exported.ui.positions[id as keyof typeof flow.ui.positions]).toEqual(at);

    // when: the export, without its positions, is imported as a new workflow (laid out on open),
    // laid out again by the toolbar, and saved
    const { ui: _ui, ...bare } = exported;
    await importViaUi(page, JSON.stringify({ ...bare, name: 'w-ctor-2' }));
    await expect.poll(nodeIdsOnCanvas).toEqual([...IDS].sort());
    await page.getByTestId('auto-layout').click();
    await expect.poll(() => page.getByTestId('problems-count').textContent()).toBe('0');
    expect(await saveViaUi(page)).toMatch(/saved/i);
    // then: the host has it, node for node and edge for edge, each node placed (but `__proto__`)
    const saved = await app.api<Output<'workflow:get'>>('workflow:get', { name: 'w-ctor-2' });
    expect(saved.definition.nodes).toEqual(flow.nodes);
    expect(saved.definition.edges).toEqual(flow.edges);
    const placed = saved.definition.ui?.positions ?? {};
    expect(Object.keys(placed).sort()).toEqual(['constructor', 'hasOwnProperty', 'toString', 'valueOf']);
    // laid out left to right along the chain
    const x = (id: string) => placed[id]?.x ?? NaN;
    expect(x('constructor')).toBeLessThan(x('toString'));
    expect(x('toString')).toBeLessThan(x('hasOwnProperty'));
    expect(x('hasOwnProperty')).toBeLessThan(x('valueOf'));
    expect(app.errors).toEqual([]);
  });

  it('the monitor shows an instance: graph, timeline, history, each node, and time travel', async () => {
    const { page } = app;
    // given: an instance run to its end
    const id = (await app.api<Output<'instance:start'>>('instance:start', { workflow: 'w-ctor' })).id;
    const done = await waitUntil(
      () => app.api<InstanceDetail>('instance:get', { id }),
      (d) => d.status === 'COMPLETED',
      'the run to end',
    );
    expect(done.variables).toEqual({ constructor: { n: 1 }, toString: 'text', valueOf: 2 });
    const history = (await app.api<Output<'instance:history'>>('instance:history', { id })).events;

    // when: it is opened in the monitor
    await openFromList(page, id);
    // then: the graph draws every node completed
    for (const n of IDS)
      await expect.poll(() => page.getByTestId(`graph-node-${n}`).getAttribute('data-state')).toBe('completed');
    // the timeline has a row for each node
    await page.getByTestId('detail-tab-timeline').click();
    for (const n of IDS) await expect.poll(() => page.getByTestId(`gantt-row-${n}`).count()).toBe(1);
    // the history lists every entry
    await page.getByTestId('detail-tab-history').click();
    await expect.poll(() => page.locator('[data-testid^="history-row-"]').count()).toBe(history.length);
    // the variables tree shows the three variables
    await page.getByTestId('detail-tab-variables').click();
    const tree = (await page.getByTestId('variables-tree').textContent()) ?? '';
    for (const v of ['constructor', 'toString', 'valueOf']) expect(tree).toContain(v);

    // and each node's panel shows its own status and output
    for (const n of IDS) {
      await page.getByTestId(`graph-node-${n}`).click();
      await expect.poll(() => page.getByTestId('node-panel').getAttribute('data-node')).toBe(n);
      expect(await page.getByTestId('node-panel-status').textContent()).toBe('COMPLETED');
    }
    await page.getByTestId('graph-node-toString').click();
    await expect.poll(() => page.getByTestId('node-output').textContent()).toContain('text');

    // when: time travel goes back to the first entry, then to where `toString` completed
    await page.getByTestId('time-travel-toggle').click();
    const bar = page.getByTestId('time-travel');
    await expect.poll(() => bar.getAttribute('data-entry-id')).toBe(String(history.at(-1)?.id));
    await page.getByTestId('time-travel-slider').fill('0');
    await expect.poll(() => bar.getAttribute('data-entry-id')).toBe(String(history[0]?.id));
    for (const n of IDS)
      await expect.poll(() => page.getByTestId(`graph-node-${n}`).getAttribute('data-state')).not.toBe('completed');
    const mid = history.findIndex((e) => e.type === 'node.completed' && e.nodeId === 'toString');
    await page.getByTestId('time-travel-slider').fill(String(mid));
    await expect.poll(() => bar.getAttribute('data-entry-id')).toBe(String(history[mid]?.id));
    // then: the graph and the node panel are as they were there
    await expect.poll(() => page.getByTestId('graph-node-toString').getAttribute('data-state')).toBe('completed');
    expect(await page.getByTestId('graph-node-hasOwnProperty').getAttribute('data-state')).not.toBe('completed');
    expect(await page.getByTestId('graph-node-__proto__').getAttribute('data-state')).not.toBe('completed');
    await page.getByTestId('graph-node-__proto__').click();
    await expect.poll(() => page.getByTestId('node-panel').getAttribute('data-node')).toBe('__proto__');
    expect(await page.getByTestId('node-panel-status').textContent()).not.toBe('COMPLETED');
    await page.getByTestId('detail-tab-variables').click();
    const then = (await page.getByTestId('variables-tree').textContent()) ?? '';
    expect(then).toContain('toString');
    expect(then).not.toContain('valueOf');
    expect(app.errors).toEqual([]);
  });
});
