// The designer store, built fresh per test over a fake API (STYLE.md: store creators apart from
// hooks): drawing, deleting with edges (C09), undo/redo steps, copy/paste, renames, live
// validation, save and versions.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Result } from '../../../../engine/api/contract';
import { createDefaultRegistry } from '../../../../engine/nodes/registry';
import { register as registerPipelineNodes } from '../../../../examples/pipeline-nodes';
import type { ApiClient } from '../../../../renderer/src/api/client';
import { createDesignerStore, exportFileName } from '../../../../renderer/src/stores/designer-store';
import { createWorkflowsStore } from '../../../../renderer/src/stores/workflows-store';
import { createAppStores } from '../../../../renderer/src/stores/app-stores';
import { runCommand } from '../../../../renderer/src/commands';
import { designerStoreFor } from '../../../../renderer/src/designer/context';
import { checkScriptSyntax, designerProblems, catalogFrom } from '../../../../renderer/src/designer/validation';
import { checkAgainstSchema, schemaFields, variablesSkeleton } from '../../../../renderer/src/designer/run-variables';

type Handler = (input: unknown) => Result<unknown> | Promise<Result<unknown>>;

const TYPES = createDefaultRegistry().describe();
const root = path.resolve(import.meta.dirname, '../../../..');

function fakeApi(handlers: Partial<Record<string, Handler>> = {}) {
  const calls: Array<[string, unknown]> = [];
  const table: Partial<Record<string, Handler>> = { 'node:types': () => ({ ok: true, value: TYPES }), ...handlers };
  const invoke = (async (channel: string, input?: unknown) => {
    calls.push([channel, input]);
    const h = table[channel];
    return h ? h(input) : { ok: false, error: { code: 'UNKNOWN_CHANNEL', message: `no fake for ${channel}` } };
  }) as ApiClient['invoke'];
  return { api: { invoke }, calls, called: (c: string) => calls.filter(([ch]) => ch === c) };
}

async function fresh(handlers: Partial<Record<string, Handler>> = {}) {
  const fake = fakeApi(handlers);
  const workflows = createWorkflowsStore(fake.api);
  const store = createDesignerStore({ api: fake.api, workflows, analyzeDelayMs: 0 });
  await store.getState().loadTypes();
  store.getState().newWorkflow('t');
  return { store, fake, workflows, s: () => store.getState() };
}

/** a → b → c drawn with the store's own actions. */
async function abc() {
  const t = await fresh();
  const { s } = t;
  for (const [id, x] of [
    ['a', 0],
    ['b', 260],
    ['c', 520],
  ] as const) {
    const made = s().addNode('pass', { x, y: 0 });
    expect(s().renameNode(made!, id)).toBeUndefined();
  }
  s().onConnect({ source: 'a', target: 'b', sourceHandle: 'out', targetHandle: 'in' });
  s().onConnect({ source: 'b', target: 'c', sourceHandle: 'out', targetHandle: 'in' });
  return t;
}

const edgesOf = (def: { edges?: Array<{ from: string; to: string }> }) => (def.edges ?? []).map((e) => `${e.from}->${e.to}`);

describe('designer store: drawing', () => {
  it('adds nodes with fresh ids, selects the new one, and draws edges', async () => {
    const { s } = await abc();
    expect(s().nodes.map((n) => n.id)).toEqual(['a', 'b', 'c']);
    expect(s().nodes.filter((n) => n.selected).map((n) => n.id)).toEqual(['c']);
    expect(edgesOf(s().exportDefinition())).toEqual(['a->b', 'b->c']);
    expect(s().addNode('pass', { x: 0, y: 0 })).toBe('pass');
    expect(s().addNode('pass', { x: 0, y: 0 })).toBe('pass-2');
    // a node dropped on an occupied spot is nudged off it
    const positions = s().nodes.map((n) => `${n.position.x},${n.position.y}`);
    expect(new Set(positions).size).toBe(positions.length);
  });

  it('refuses a cycle, a self-loop and a duplicate with the reason in `refusal`; draws an error edge from the error handle', async () => {
    const { s } = await abc();
    s().onConnect({ source: 'c', target: 'a', sourceHandle: 'out', targetHandle: 'in' });
    expect(s().refusal?.text).toBe('Refused: it would make a cycle "a" → "b" → "c" → "a"');
    s().onConnect({ source: 'b', target: 'b', sourceHandle: 'out', targetHandle: 'in' });
    expect(s().refusal?.text).toMatch(/itself/);
    s().onConnect({ source: 'a', target: 'b', sourceHandle: 'out', targetHandle: 'in' });
    expect(s().refusal?.text).toMatch(/already exists/);
    expect(s().edges).toHaveLength(2);
    s().onConnect({ source: 'a', target: 'c', sourceHandle: 'error', targetHandle: 'in' });
    expect(s().exportDefinition().edges?.at(-1)).toEqual({ from: 'a', to: 'c', on: 'error' });
  });

  it('C09: deleting a node deletes its edges in the model; undo restores both; redo removes them', async () => {
    // given
    const { s } = await abc();
    s().selectOnly('node', 'b');
    // when
    s().deleteSelection();
    // then
    const exported = s().exportDefinition();
    expect(exported.nodes.map((n) => n.id)).toEqual(['a', 'c']);
    expect(JSON.stringify(exported.edges)).not.toContain('"b"');
    expect(Object.keys(exported.ui?.positions ?? {})).toEqual(['a', 'c']);
    // undo: b and both edges are back, in one step
    s().undo();
    expect(s().nodes.map((n) => n.id)).toEqual(['a', 'b', 'c']);
    expect(edgesOf(s().exportDefinition())).toEqual(['a->b', 'b->c']);
    // redo: gone again
    s().redo();
    expect(s().nodes.map((n) => n.id)).toEqual(['a', 'c']);
    expect(s().edges).toEqual([]);
  });

  it('selection and measuring are no undo steps; a drag is one', async () => {
    const { store, s } = await abc();
    const steps = () => store.temporal.getState().pastStates.length;
    const before = steps();
    s().selectOnly('node', 'a');
    s().onNodesChange([{ type: 'dimensions', id: 'a', dimensions: { width: 196, height: 80 } }]);
    s().selectAll();
    expect(steps()).toBe(before);
    // a drag: many position changes between beginBatch and endBatch
    s().beginBatch();
    for (let x = 1; x <= 30; x++) s().onNodesChange([{ type: 'position', id: 'a', position: { x, y: x }, dragging: true }]);
    s().endBatch();
    expect(steps()).toBe(before + 1);
    expect(s().nodes[0]!.position).toEqual({ x: 30, y: 30 });
    s().undo();
    expect(s().nodes[0]!.position).toEqual({ x: 0, y: 0 });
  });

  it('auto-layout is one undo step', async () => {
    const { store, s } = await abc();
    const before = store.temporal.getState().pastStates.length;
    s().layout();
    expect(store.temporal.getState().pastStates.length).toBe(before + 1);
    const xs = s().nodes.map((n) => n.position.x);
    expect(xs[0]).toBeLessThan(xs[1]!);
    expect(xs[1]).toBeLessThan(xs[2]!);
  });

  it('copy/paste gives fresh ids and offset copies with their inner edges; editing the copy leaves the original', async () => {
    const { s } = await abc();
    s().updateNode('a', (d) => ({ ...d, name: 'Original', config: { result: { n: 1 } } }));
    s().selectOnly('node', 'a');
    s().onNodesChange([{ type: 'select', id: 'b', selected: true }]);
    expect(s().copySelection()).toBe(2);
    // when
    const pasted = s().paste();
    // then
    expect(pasted).toEqual(['a-2', 'b-2']);
    const copy = s().nodes.find((n) => n.id === 'a-2')!;
    const original = s().nodes.find((n) => n.id === 'a')!;
    expect(copy.position).toEqual({ x: original.position.x + 40, y: original.position.y + 40 });
    expect(edgesOf(s().exportDefinition())).toEqual(['a->b', 'b->c', 'a-2->b-2']);
    s().updateNode('a-2', (d) => ({ ...d, name: 'Copy', config: { result: { n: 2 } } }));
    const out = s().exportDefinition().nodes;
    expect(out.find((n) => n.id === 'a')).toMatchObject({ name: 'Original', config: { result: { n: 1 } } });
    expect(out.find((n) => n.id === 'a-2')).toMatchObject({ name: 'Copy', config: { result: { n: 2 } } });
    // a second paste goes further, with ids fresh again; duplicate leaves the clipboard alone
    expect(s().paste()).toEqual(['a-3', 'b-3']);
    s().selectOnly('node', 'c');
    expect(s().duplicateSelection()).toEqual(['c-2']);
    expect(s().paste()).toEqual(['a-4', 'b-4']);
  });

  it('renaming a node updates every edge (default edge ids follow, explicit ones stay)', async () => {
    const { s } = await abc();
    const ab = s().edges[0]!.id;
    s().updateEdge(ab, (d) => ({ ...d, id: 'first', when: 'x > 1' }));
    expect(s().renameNode('b', 'bee 1')).toMatch(/no spaces/);
    expect(s().renameNode('b', 'c')).toMatch(/already/);
    expect(s().renameNode('b', '🐝')).toBeUndefined();
    expect(s().exportDefinition().edges).toEqual([
      { id: 'first', from: 'a', to: '🐝', when: 'x > 1' },
      { from: '🐝', to: 'c' },
    ]);
    expect(s().edges.map((e) => e.id)).toEqual(['first', '🐝->c']);
  });

  it('an edge switched to error moves to the error handle; the label and when are kept', async () => {
    const { s } = await abc();
    const id = s().edges[1]!.id;
    s().updateEdge(id, (d) => ({ ...d, on: 'error', label: 'on failure' }));
    const e = s().edges[1]!;
    expect(e).toMatchObject({ sourceHandle: 'error', id: 'b-!>c' });
    expect(s().exportDefinition().edges?.[1]).toEqual({ from: 'b', to: 'c', on: 'error', label: 'on failure' });
  });
});

describe('designer store: validation', () => {
  it('lists every problem with the engine validator (by node and edge), script syntax errors included', async () => {
    const { s } = await abc();
    s().updateNode('a', (d) => ({ ...d, type: 'http', config: {} }));
    s().updateNode('c', (d) => ({ ...d, type: 'script', config: { code: 'return (1 +;' } }));
    s().updateEdge(s().edges[0]!.id, (d) => ({ ...d, when: 'a = = b' }));
    const codes = s().problems.map((p) => p.code);
    expect(codes).toEqual(expect.arrayContaining(['INVALID_CONFIG', 'EXPRESSION_PARSE']));
    expect(s().problemsByNode.get('a')?.[0]?.message).toMatch(/config\.url/);
    expect(s().problemsByEdge.get(s().edges[0]!.id)?.[0]?.code).toBe('EXPRESSION_PARSE');
    expect(s().problemsByNode.get('c')?.[0]).toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(/syntax error at line 1, column/) });
    // focusing a problem selects its edge
    s().focusProblem({ edgeId: 'a->b' });
    expect(s().edges.filter((e) => e.selected).map((e) => e.id)).toEqual(['a->b']);
    expect(s().focus).toMatchObject({ kind: 'edge', id: 'a->b' });
  });

  it('agrees with the host on every example: no problems', () => {
    const catalog = catalogFrom(TYPES.concat(loadPipelineTypes()));
    for (const name of ['csv-pipeline', 'ota-upgrade', 'purchase-approval']) {
      const raw = JSON.parse(fs.readFileSync(path.join(root, 'examples', `${name}.workflow.json`), 'utf8')) as unknown;
      expect(designerProblems(raw, catalog), name).toEqual([]);
    }
  });

  it('checks script syntax where the engine would compile it, giving line and column in the script', () => {
    expect(checkScriptSyntax('return input.x;')).toBeUndefined();
    expect(checkScriptSyntax('const a = 1;\nreturn a +;')).toMatchObject({ line: 2, column: 11 });
    expect(checkScriptSyntax('return (;')).toMatchObject({ line: 1, column: 9 });
  });
});

/** The examples' custom types too, as node:types lists them from a host that registered them. */
function loadPipelineTypes() {
  const registry = createDefaultRegistry();
  registerPipelineNodes(registry);
  return registry.describe().filter((t) => !TYPES.some((b) => b.type === t.type));
}

describe('designer store: save, versions, dirty', () => {
  it('refuses to save with problems, naming how many; sends the drawing otherwise and is clean after', async () => {
    let saved: unknown;
    const { s, fake } = await fresh({
      'workflow:save': (input) => {
        saved = (input as { definition: unknown }).definition;
        return { ok: true, value: { workflowId: 1, name: 't', version: 1, created: true } };
      },
      'workflow:versions': () => ({ ok: true, value: [{ id: 1, version: 1, createdAt: 5 }] }),
      'workflow:list': () => ({ ok: true, value: [] }),
    });
    const id = s().addNode('http', { x: 0, y: 0 })!;
    expect(s().dirty).toBe(true);
    expect(await s().save()).toBe(false);
    expect(s().message).toMatchObject({ kind: 'error', text: expect.stringMatching(/1 problem/) });
    expect(fake.called('workflow:save')).toHaveLength(0);
    s().updateNode(id, (d) => ({ ...d, config: { url: 'https://example.test' } }));
    expect(await s().save()).toBe(true);
    expect(saved).toEqual({ format: 1, name: 't', nodes: [{ id: 'http', type: 'http', config: { url: 'https://example.test' } }], edges: [], ui: { positions: { http: { x: 0, y: 0 } } } });
    expect(s()).toMatchObject({ dirty: false, source: { name: 't', version: 1, latest: 1 }, versions: [{ version: 1, createdAt: 5 }] });
    // undo back to before the save makes it unsaved; redo to the saved drawing is clean again
    s().undo();
    expect(s().dirty).toBe(true);
    s().redo();
    expect(s().dirty).toBe(false);
  });

  it("shows the host's problems when it refuses a save, until the next change", async () => {
    const { s } = await fresh({
      'workflow:save': () => ({ ok: false, error: { code: 'INVALID_WORKFLOW', message: 'workflow is invalid (1 problem):\nUNKNOWN_TYPE …', details: [{ code: 'UNKNOWN_TYPE', message: 'node "x": type "y" is not a known node type', nodeId: 'x', path: ['nodes', 0, 'type'] }] } }),
    });
    s().addNode('pass', { x: 0, y: 0 });
    expect(await s().save()).toBe(false);
    expect(s().serverProblems.map((p) => p.code)).toEqual(['UNKNOWN_TYPE']);
    // the message says how many and the first, not the cut first line of the error text
    expect(s().message?.text).toBe('Not saved: 1 problem (see Problems): node "x": type "y" is not a known node type');
    expect(s().problemsByNode.get('x')?.map((p) => p.code)).toEqual(['UNKNOWN_TYPE']);
    s().addNode('pass', { x: 200, y: 0 });
    expect(s().serverProblems).toEqual([]);
    expect(s().problemsByNode.get('x')).toBeUndefined();
  });

  it("lists what the host's workflow:validate finds beyond the live check, without repeating the live ones", async () => {
    const host = [
      { code: 'INVALID_CONFIG', message: 'node "pass": config.result must not be 7', nodeId: 'pass', path: ['nodes', 0, 'config', 'result'] },
    ];
    const fake = fakeApi({ 'workflow:validate': () => ({ ok: true, value: { ok: false, problems: host } }) });
    const claimed: string[] = [];
    const store = createDesignerStore({ api: fake.api, analyzeDelayMs: 0, hostCheckDelayMs: 0, claimError: (c) => claimed.push(c) });
    await store.getState().loadTypes();
    store.getState().newWorkflow('t');
    store.getState().addNode('pass', { x: 0, y: 0 });
    await expect.poll(() => store.getState().serverProblems.map((p) => p.message)).toEqual([host[0]!.message]);
    expect(store.getState().problemsByNode.get('pass')?.map((p) => p.code)).toEqual(['INVALID_CONFIG']);
    expect(await store.getState().save()).toBe(false);
    expect(store.getState().message?.text).toMatch(/Cannot save: 1 problem/);
    expect(claimed).toEqual([]);
  });

  it('opens a saved version read-only: nothing changes until restored as a new version', async () => {
    const def = { name: 'w', nodes: [{ id: 'a', type: 'pass' }], edges: [], ui: { positions: { a: { x: 0, y: 0 } } } };
    const { s } = await fresh({
      'workflow:get': (input) => ({ ok: true, value: { id: 1, name: 'w', version: (input as { version?: number }).version ?? 2, createdAt: 0, definition: def } }),
      'workflow:versions': () => ({ ok: true, value: [{ id: 2, version: 2, createdAt: 2 }, { id: 1, version: 1, createdAt: 1 }] }),
      'workflow:save': () => ({ ok: true, value: { workflowId: 3, name: 'w', version: 3, created: true } }),
      'workflow:list': () => ({ ok: true, value: [] }),
    });
    expect(await s().open('w', 1)).toBe(true);
    expect(s()).toMatchObject({ readOnly: true, source: { name: 'w', version: 1, latest: 2 }, dirty: false });
    s().addNode('pass', { x: 0, y: 0 });
    s().selectOnly('node', 'a');
    s().deleteSelection();
    expect(s().nodes.map((n) => n.id)).toEqual(['a']);
    expect(await s().save()).toBe(false);
    expect(await s().restoreVersion()).toBe(true);
    expect(s().message?.text).toBe('Restored version 1 as version 3');
  });

  it('imports text as an unsaved draft (a syntax error is refused with where it is); export is the DSL with positions', async () => {
    const { s } = await fresh();
    expect(s().importText('{ "name": ', 'x.json')).toEqual({ ok: false, message: expect.stringContaining('x.json:1:') });
    expect(s().importText('name: y\nnodes:\n  - id: a\n    type: pass\n', 'y.yaml')).toEqual({ ok: true });
    expect(s()).toMatchObject({ dirty: true, source: undefined, meta: { name: 'y' } });
    const file = s().exportFile();
    expect(file.fileName).toBe('y.workflow.json');
    expect(JSON.parse(file.text)).toMatchObject({ name: 'y', nodes: [{ id: 'a', type: 'pass' }], ui: { positions: { a: expect.any(Object) } } });
    expect(exportFileName('a/b: c')).toBe('a_b_ c.workflow.json');
  });
});

describe('run dialog checks', () => {
  it('starts from a skeleton of the input schema and names failing fields', () => {
    const schema = { type: 'object', required: ['deviceId'], properties: { deviceId: { type: 'string', minLength: 1 }, n: { type: 'integer' } } };
    expect(JSON.parse(variablesSkeleton(schema))).toEqual({ deviceId: 'x' });
    expect(JSON.parse(variablesSkeleton({ ...schema, required: ['deviceId', 'n'] }))).toEqual({ deviceId: 'x', n: 0 });
    expect(schemaFields(schema)).toEqual(['deviceId* (string)', 'n (integer)']);
    expect(checkAgainstSchema(schema, { n: 1 })).toMatch(/deviceId/);
    expect(checkAgainstSchema(schema, { deviceId: 'd-1' })).toBeUndefined();
    expect(checkAgainstSchema(undefined, {})).toBeUndefined();
  });
});

describe('app-menu commands in the Designer', () => {
  it('New opens the Designer and asks it for a new draft; Import and Export there act on the drawing', async () => {
    const fake = fakeApi();
    const api: ApiClient = {
      transport: 'http',
      invoke: fake.api.invoke,
      desktop: undefined,
      onEvent: () => () => undefined,
      onCommand: () => () => undefined,
      onResync: () => () => undefined,
      onConnection: () => () => undefined,
      close: () => undefined,
    };
    const stores = createAppStores(api);
    const files = { pickWorkflowFile: () => Promise.resolve(undefined), saveFile: () => Promise.resolve() };
    await runCommand('workflow.new', stores, files);
    expect(stores.ui.getState().view).toBe('designer');
    const designer = designerStoreFor(stores);
    expect(designerStoreFor(stores)).toBe(designer);
    expect(designer.getState().request?.kind).toBe('new');
    await runCommand('workflow.import', stores, files);
    expect(designer.getState().request?.kind).toBe('import');
    await runCommand('workflow.export', stores, files);
    expect(designer.getState().request?.kind).toBe('export');
    expect(fake.called('workflow:import')).toEqual([]);
    expect(fake.called('workflow:export')).toEqual([]);
  });
});
