// The Designer's validation agrees with the engine's save, in real Chromium through the browser
// host (issue 15, item 4). For every node type the host lists, configs are generated from its
// config JSON Schema and from the examples' configs (empty, an unknown field, each field of the
// wrong type or out of range, a template that does not parse, each missing field added): the page's own live check must name a
// problem on exactly the nodes the host's validation refuses (built-in types: refinements such as
// a delay's "durationMs or until" included), and for a custom type the host's extra findings must
// be listed too, before Save. A Delay with no duration is refused before Save, with a badge on the
// node, the whole reason in the message line, and no toast over the Problems panel.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeTypeInfo, Output } from '../../../engine/api/contract';
import { addNode, canvasCentre, EXAMPLES, exampleText, importViaUi, nodeAt, openWorkflowSettings, startDesignerApp, type DesignerApp } from '../../helpers/designer-e2e';

let app: DesignerApp;

beforeAll(async () => {
  // A workflow named as the generated configs name one ('x'): a subworkflow or map calling it is
  // a config the engine takes (a call of a workflow not deployed is UNKNOWN_WORKFLOW).
  app = await startDesignerApp({ deploy: [{ format: 1, name: 'x', nodes: [{ id: 'a', type: 'pass' }], edges: [] }] });
});

afterAll(async () => {
  await app?.close();
});

const BUILTINS = ['pass', 'script', 'http', 'delay', 'approval'];

type Json = Record<string, unknown>;
interface PropSchema {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  minItems?: number;
}

/** A value of the JSON type `schema` names (or a string). */
function sample(schema: PropSchema): unknown {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (schema.enum !== undefined) return schema.enum[0];
  switch (type) {
    case 'number':
    case 'integer':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return 'x';
  }
}

/** Values a field of `schema` must refuse: another JSON type, out of range, not in the enum. */
function wrongValues(schema: PropSchema): unknown[] {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const out: unknown[] = [];
  if (schema.enum !== undefined) out.push('NOT-IN-THE-ENUM');
  if (type === 'string') out.push(42, '{{ ( }}');
  if (type === 'number' || type === 'integer') out.push('x');
  if (type === 'integer') out.push(1.5);
  if (type === 'boolean' || type === 'array' || type === 'object') out.push('x');
  if (schema.minimum !== undefined) out.push(schema.minimum - 1);
  if (schema.maximum !== undefined) out.push(schema.maximum + 1);
  if (schema.minLength !== undefined && schema.minLength > 0) out.push('');
  if (schema.minItems !== undefined && schema.minItems > 0) out.push([]);
  return out;
}

/** Every config of every example (nodes and compensations), by type. */
function exampleConfigs(): Map<string, Json[]> {
  const out = new Map<string, Json[]>();
  for (const name of EXAMPLES) {
    const def = JSON.parse(exampleText(name)) as { nodes: Array<{ type: string; config?: Json; compensate?: { type: string; config?: Json } }> };
    for (const holder of def.nodes.flatMap((n) => [n, n.compensate]).filter((h) => h !== undefined)) {
      out.set(holder.type, [...(out.get(holder.type) ?? []), holder.config ?? {}]);
    }
  }
  return out;
}

/** Configs to try for type `t`: generated from its JSON Schema over the bases. */
function candidates(t: NodeTypeInfo, bases: Json[]): Json[] {
  const schema = t.configJsonSchema as { properties?: Record<string, PropSchema>; required?: string[] };
  const props = Object.entries(schema.properties ?? {});
  const out: Json[] = [{}, { zzNoSuchField: true }, { zzNoSuchField: '{{ ( }}' }];
  // The required fields, each with a sample value: a base when no example has the type.
  const minimal = Object.fromEntries(props.filter(([k]) => (schema.required ?? []).includes(k)).map(([k, s]) => [k, sample(s)]));
  for (const base of [...bases, minimal]) {
    out.push(base, { ...base, zzNoSuchField: true });
    for (const [key, s] of props) {
      for (const wrong of wrongValues(s)) out.push({ ...base, [key]: wrong });
      if (!(key in base)) out.push({ ...base, [key]: sample(s) });
      if (key in base) {
        const rest = { ...base };
        delete rest[key];
        out.push(rest);
      }
    }
  }
  const seen = new Set<string>();
  return out.filter((c) => {
    const key = JSON.stringify(c);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The problems panel's items: node id → codes, live ones or every one. */
async function panelByNode(page: Page, from?: 'live'): Promise<Map<string, string[]>> {
  const selector = from === undefined ? '[data-testid^="problem-"][data-code]' : `[data-testid^="problem-"][data-from="${from}"]`;
  const items = await page.locator(selector).evaluateAll((els) => els.map((e) => [e.getAttribute('data-node') ?? '', e.getAttribute('data-code') ?? ''] as const));
  const out = new Map<string, string[]>();
  for (const [node, code] of items) out.set(node, [...(out.get(node) ?? []), code].sort());
  return out;
}

describe('designer validation agrees with the engine', () => {
  it('for every node type, the configs the engine refuses are problems in the designer before Save', async () => {
    const { page } = app;
    const types = await app.api<NodeTypeInfo[]>('node:types');
    expect(types.map((t) => t.type)).toEqual(expect.arrayContaining(BUILTINS));
    const bases = exampleConfigs();
    // given: one node per generated config (no edges: each is an entry node)
    const nodes: Array<{ id: string; type: string; config: Json }> = [];
    for (const t of types) candidates(t, bases.get(t.type) ?? []).forEach((config, i) => nodes.push({ id: `${t.type.replace(/\W/g, '-')}-${i}`, type: t.type, config }));
    const definition = { format: 1, name: 'generated-configs', nodes, edges: [] };
    const host = await app.api<Output<'workflow:validate'>>('workflow:validate', { definition });
    const hostByNode = new Map<string, string[]>();
    for (const p of host.problems) if (p.nodeId !== undefined) hostByNode.set(p.nodeId, [...(hostByNode.get(p.nodeId) ?? []), p.code].sort());
    const typeOf = new Map(nodes.map((n) => [n.id, n.type]));
    // every type has configs the engine refuses, and some it takes
    for (const t of types) {
      const ids = nodes.filter((n) => n.type === t.type).map((n) => n.id);
      expect(ids.filter((id) => hostByNode.has(id)).length, `${t.type}: refused configs`).toBeGreaterThan(0);
      expect(ids.filter((id) => !hostByNode.has(id)).length, `${t.type}: accepted configs`).toBeGreaterThan(0);
    }

    // when: the workflow is imported into the designer
    await importViaUi(page, JSON.stringify(definition));

    // then: the page's own check names the same problems on the same built-in nodes as the host
    await expect.poll(async () => (await page.locator('[data-testid^="problem-"][data-from="live"]').count()) > 0).toBe(true);
    const live = await panelByNode(page, 'live');
    const builtinIds = nodes.filter((n) => BUILTINS.includes(n.type)).map((n) => n.id);
    const disagree = builtinIds
      .filter((id) => JSON.stringify(live.get(id) ?? []) !== JSON.stringify(hostByNode.get(id) ?? []))
      .map((id) => ({ id, config: nodes.find((n) => n.id === id)?.config, designer: live.get(id) ?? [], engine: hostByNode.get(id) ?? [] }));
    expect(disagree).toEqual([]);
    // and every node the host refuses (custom types too) is listed, once the host has answered,
    // with its badge on the canvas
    await expect
      .poll(async () => {
        const all = await panelByNode(page);
        return [...hostByNode.keys()].filter((id) => !all.has(id));
      })
      .toEqual([]);
    for (const id of [...hostByNode.keys()].filter((k) => typeOf.get(k) === 'delay')) {
      expect(await nodeAt(page, id).locator('[data-testid="badge-problems"]').count(), id).toBe(1);
    }
  });

  it('a Delay with no duration is a problem at once; Save is refused with the reason, a badge, and no toast', async () => {
    const { page } = app;
    await page.getByTestId('new-workflow').click();
    await page.getByTestId('unsaved-discard').click({ timeout: 2000 }).catch(() => undefined);
    const c = await canvasCentre(page);
    // when: a Delay is dropped and left without durationMs or until
    await addNode(page, 'delay', 'wait', { x: c.x, y: c.y });
    // then: it is a problem at once, named on the node (the empty draft's one problem, no entry
    // node, gives way to it: the count alone can read 1 before the node is drawn)
    await expect
      .poll(async () => [await page.getByTestId('problems-count').textContent(), await page.getByTestId('problem-0').getAttribute('data-code')])
      .toEqual(['1', 'INVALID_CONFIG']);
    expect(await page.getByTestId('problems-panel').textContent()).not.toContain('The workflow is valid');
    expect(await page.getByTestId('problem-0').textContent()).toContain('give exactly one of durationMs or until');
    expect(await nodeAt(page, 'wait').locator('[data-testid="badge-problems"]').textContent()).toBe('1');
    // when: Save is pressed anyway
    await openWorkflowSettings(page);
    await page.getByTestId('prop-workflow-name').fill('delay-without-duration');
    await page.getByTestId('save-workflow').click();
    // then: refused in the page with the count (not a cut-off host message), no toast
    await expect.poll(() => page.getByTestId('designer-message-text').textContent()).toBe('Cannot save: 1 problem to fix first (see Problems)');
    await page.waitForTimeout(300);
    expect(await page.getByTestId('toast').count()).toBe(0);
    expect((await app.api<Output<'workflow:list'>>('workflow:list')).map((w) => w.name)).not.toContain('delay-without-duration');
  });
});
