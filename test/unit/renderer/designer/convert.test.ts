// The designer's pure core: definition ⇄ canvas, connection rules, ids, layout, node summaries and
// the config form read from a type's JSON Schema.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, exportWorkflow, normalizeWorkflow, parseWorkflowText, WorkflowSchema } from '../../../../engine/dsl';
import { createDefaultRegistry } from '../../../../engine/nodes/registry';
import { fromDefinition, toDefinition, makeEdge } from '../../../../renderer/src/designer/convert';
import { connectionRefusal, findPath } from '../../../../renderer/src/designer/graph-rules';
import { freshId, idProblem, sanitizeId } from '../../../../renderer/src/designer/ids';
import { autoLayout, GRID } from '../../../../renderer/src/designer/layout';
import { configFields, textOrNumber } from '../../../../renderer/src/designer/schema-form';
import { freshFieldName, readFields, writeFields } from '../../../../renderer/src/designer/input-schema-form';
import { badgesOf, configSummary, formatMs } from '../../../../renderer/src/designer/summary';
import type { DesignerDoc, FlowEdge } from '../../../../renderer/src/designer/types';

const root = path.resolve(import.meta.dirname, '../../../..');
const EXAMPLES = ['csv-pipeline', 'ota-upgrade', 'purchase-approval'];
const read = (name: string): string => fs.readFileSync(path.join(root, 'examples', `${name}.workflow.json`), 'utf8');

function draw(raw: unknown): DesignerDoc {
  const r = fromDefinition(raw);
  if (!r.ok) throw new Error(r.message);
  return r.doc;
}

const edge = (source: string, target: string, on?: 'error'): FlowEdge => makeEdge(source, target, on ? { on } : {});

describe('definition ⇄ canvas', () => {
  it.each(EXAMPLES)('%s: import → export is byte-equal after normalisation, positions included', (name) => {
    // given
    const raw = parseWorkflowText(read(name), `${name}.workflow.json`);
    // when
    const exported = toDefinition(draw(raw));
    // then
    expect(canonicalJson(normalizeWorkflow(exported))).toBe(canonicalJson(normalizeWorkflow(raw)));
    expect((exported as { ui?: unknown }).ui).toEqual((raw as { ui?: unknown }).ui);
    // and it is the very text the host's workflow:export writes for the saved file
    expect(JSON.stringify(exported, null, 2)).toBe(JSON.stringify(exportWorkflow(WorkflowSchema.parse(raw)), null, 2));
  });

  it('C10: import → export → import → export is stable, and positions equal the imported ones', () => {
    // given: a file with odd positions, unknown ui keys and Unicode ids
    const raw = {
      name: 'c10',
      nodes: [
        { id: '検査', type: 'pass' },
        { id: '🚀', type: 'delay', config: { durationMs: 5 } },
      ],
      edges: [{ from: '検査', to: '🚀', label: 'go' }],
      ui: { positions: { '検査': { x: -12.5, y: 3 }, '🚀': { x: 240.25, y: -80 } }, zoom: 0.8 },
    };
    // when
    const once = toDefinition(draw(raw));
    const twice = toDefinition(draw(JSON.parse(JSON.stringify(once))));
    // then
    expect(once.ui).toEqual(raw.ui);
    expect(JSON.stringify(twice)).toBe(JSON.stringify(once));
  });

  it('keeps what the schema does not know (lossless even for invalid input), and unique canvas ids for duplicate edges', () => {
    // given
    const raw = {
      name: 'odd',
      retyr: 3,
      nodes: [{ id: 'a', type: 'pass', colour: 'red' }, { id: 'b', type: 'pass' }],
      edges: [
        { from: 'a', to: 'b', weight: 2 },
        { from: 'a', to: 'b' },
      ],
    };
    // when
    const doc = draw(raw);
    const out = toDefinition(doc) as unknown as typeof raw;
    // then
    expect(new Set(doc.edges.map((e) => e.id)).size).toBe(2);
    expect(out.retyr).toBe(3);
    expect(out.nodes[0]).toMatchObject({ id: 'a', colour: 'red' });
    expect(out.edges[0]).toEqual({ from: 'a', to: 'b', weight: 2 });
  });

  it('lays out nodes that have no position (all: dagre, left to right; some: a row below)', () => {
    // given
    const none = draw({ name: 'n', nodes: [{ id: 'a', type: 'pass' }, { id: 'b', type: 'pass' }], edges: [{ from: 'a', to: 'b' }] });
    const some = draw({ name: 's', nodes: [{ id: 'a', type: 'pass' }, { id: 'b', type: 'pass' }], ui: { positions: { a: { x: 100, y: 40 } } } });
    // then
    const [a, b] = none.nodes;
    expect(b!.position.x).toBeGreaterThan(a!.position.x);
    expect(a!.position.x % GRID).toBe(0);
    expect(some.nodes[0]!.position).toEqual({ x: 100, y: 40 });
    expect(some.nodes[1]!.position.y).toBeGreaterThan(40);
  });

  it('refuses what cannot be drawn, saying why', () => {
    expect(fromDefinition('x')).toMatchObject({ ok: false });
    expect(fromDefinition({ name: 'x', nodes: {} })).toEqual({ ok: false, message: '"nodes" must be an array' });
    expect(fromDefinition({ name: 'x', nodes: [{ type: 'pass' }] })).toEqual({ ok: false, message: 'nodes[0] needs a string "id" to be drawn' });
    expect(fromDefinition({ name: 'x', nodes: [], edges: [{ from: 'a' }] })).toMatchObject({ ok: false, message: expect.stringContaining('edges[0]') });
  });
});

describe('connection rules', () => {
  const edges = [edge('a', 'b'), edge('b', 'c'), edge('c', 'd', 'error')];

  it('refuses a self-loop, a duplicate, and a cycle (naming its path); allows the rest', () => {
    expect(connectionRefusal(edges, 'a', 'a')).toMatch(/itself/);
    expect(connectionRefusal(edges, 'a', 'b')).toMatch(/already exists/);
    expect(connectionRefusal(edges, 'c', 'a')).toBe('Refused: it would make a cycle "a" → "b" → "c" → "a"');
    expect(connectionRefusal(edges, 'd', 'a')).toMatch(/cycle "a" → "b" → "c" → "d" → "a"/);
    expect(connectionRefusal(edges, 'a', 'c')).toBeUndefined();
    // an error edge is not a duplicate of a normal one, and the other way round
    expect(connectionRefusal(edges, 'a', 'b', 'error')).toBeUndefined();
    expect(connectionRefusal(edges, 'c', 'd', 'error')).toMatch(/error edge/);
  });

  it('finds a shortest path', () => {
    expect(findPath([...edges, edge('a', 'c')], 'a', 'd')).toEqual(['a', 'c', 'd']);
    expect(findPath(edges, 'd', 'a')).toBeUndefined();
  });
});

describe('ids', () => {
  it('makes fresh valid ids, counting up a trailing number', () => {
    const taken = new Set(['http', 'http-2', 'check', 'check-2', 'check-3']);
    expect(freshId('http', taken)).toBe('http-3');
    expect(freshId('check-2', taken)).toBe('check-4');
    expect(freshId('new one', new Set())).toBe('new-one');
    expect(freshId('🚀发射', new Set(['🚀发射']))).toBe('🚀发射-2');
    expect(sanitizeId('')).toBe('node');
  });

  it('names why an id cannot be used', () => {
    expect(idProblem('a b', new Set())).toMatch(/no spaces/);
    expect(idProblem('a', new Set(['a']))).toMatch(/already/);
    expect(idProblem('👩‍💻', new Set())).toBeUndefined();
  });
});

describe('auto-layout', () => {
  it('places ranks left to right on the grid, error branches off the main row', () => {
    const nodes = ['a', 'b', 'c', 'x'].map((id) => ({ id }));
    const laid = autoLayout(nodes, [
      { source: 'a', target: 'b' },
      { source: 'b', target: 'c' },
      { source: 'b', target: 'x', data: { on: 'error' } },
    ]);
    const p = (id: string) => laid.get(id)!;
    expect(p('a').x).toBeLessThan(p('b').x);
    expect(p('b').x).toBeLessThan(p('c').x);
    expect(p('c').x).toBe(p('x').x);
    for (const v of laid.values()) expect([v.x % GRID, v.y % GRID].map(Math.abs)).toEqual([0, 0]);
  });
});

describe('node cards and config forms', () => {
  it('summarises the key config and shows badges', () => {
    expect(configSummary({ type: 'http', config: { method: 'POST', url: 'https://x/y' } })).toBe('POST https://x/y');
    expect(configSummary({ type: 'delay', config: { durationMs: 90_000 } })).toBe('wait 1.5 min');
    expect(configSummary({ type: 'script', config: { code: '// note\nreturn 1;' } })).toBe('return 1;');
    expect(formatMs(250)).toBe('250 ms');
    const badges = badgesOf({ type: 'http', retry: { maxAttempts: 5 }, timeoutMs: 5000, compensate: { type: 'http' }, join: 'all', onFailure: 'suspend' });
    expect(badges.map((b) => b.kind)).toEqual(['retry', 'timeout', 'compensate', 'join', 'suspend']);
  });

  it('reads form fields from every built-in config schema', () => {
    const schemas = Object.fromEntries(createDefaultRegistry().describe().map((d) => [d.type, d.configJsonSchema]));
    const kinds = (type: string) => Object.fromEntries(configFields(schemas[type]).map((f) => [f.name, f.kind]));
    expect(kinds('http')).toMatchObject({ method: 'enum', url: 'text', headers: 'json', timeoutMs: 'integer', responseType: 'enum' });
    expect(kinds('script')).toMatchObject({ code: 'code', timeLimitMs: 'integer' });
    expect(kinds('delay')).toMatchObject({ durationMs: 'integer', until: 'text-or-number' });
    expect(configFields(schemas['http']).find((f) => f.name === 'url')?.required).toBe(true);
    expect(textOrNumber('1700000000000')).toBe(1_700_000_000_000);
    expect(textOrNumber('2026-01-01T00:00:00Z')).toBe('2026-01-01T00:00:00Z');
  });
});

describe('input variables as a list', () => {
  const ota = (JSON.parse(read('ota-upgrade')) as { inputSchema: Record<string, unknown> }).inputSchema;

  it('reads the simple shape, and writes it back keeping every other keyword', () => {
    const fields = readFields(ota)!;
    expect(fields).toEqual([
      { name: 'deviceId', type: 'string', required: true, minLength: 1 },
      { name: 'baseUrl', type: 'string', required: true, pattern: '^https?://' },
      { name: 'targetVersion', type: 'string', required: true, minLength: 1 },
    ]);
    expect(writeFields(ota, fields)).toEqual(ota);
    // rename baseUrl (its pattern follows), make it optional, add a number
    const next = writeFields(ota, [fields[0]!, { name: 'base', type: 'string', required: false }, fields[2]!, { name: freshFieldName(fields), type: 'integer', required: false }], new Map([[1, 'baseUrl']]));
    expect(next).toEqual({
      type: 'object',
      required: ['deviceId', 'targetVersion'],
      properties: {
        deviceId: { type: 'string', minLength: 1 },
        base: { type: 'string', pattern: '^https?://' },
        targetVersion: { type: 'string', minLength: 1 },
        field: { type: 'integer' },
      },
    });
  });

  it('leaves other shapes to the JSON editor; no fields means no schema', () => {
    expect(readFields(undefined)).toEqual([]);
    expect(readFields({ type: 'array' })).toBeUndefined();
    expect(readFields({ type: 'object', properties: { a: { type: ['string', 'null'] } } })).toBeUndefined();
    expect(writeFields({ type: 'object', properties: { a: { type: 'string' } } }, [])).toBeUndefined();
  });
});
