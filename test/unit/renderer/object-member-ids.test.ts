// Ids and names that are Object.prototype's members (`constructor`, `toString`, `hasOwnProperty`,
// `valueOf`, `__proto__`: valid node ids, variable names) in the renderer's pure helpers: each
// is a key like any other, never read as the prototype's member nor lost to its setter.
import { describe, expect, it } from 'vitest';
import { fromDefinition, toDefinition } from '../../../renderer/src/designer/convert';
import { pinsFrom } from '../../../renderer/src/designer/run-variables';
import { autoLayout } from '../../../renderer/src/designer/layout';
import { inputTemplate } from '../../../renderer/src/input-template';
import { graphPositions } from '../../../renderer/src/monitor/graph-layout';

const IDS = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__'] as const;
const chain = IDS.slice(1).map((to, i) => ({ from: IDS[i] as string, to }));

describe('layout', () => {
  it('the designer lays out a chain of such ids left to right, every node placed', () => {
    const at = autoLayout(
      IDS.map((id) => ({ id })),
      chain.map((e) => ({ source: e.from, target: e.to })),
    );
    expect([...at.keys()]).toEqual([...IDS]);
    const xs = IDS.map((id) => at.get(id)?.x ?? NaN);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(new Set(xs).size).toBe(IDS.length);
  });

  it('the instance graph lays out a chain of such ids left to right, every node placed', () => {
    const at = graphPositions({ nodes: IDS.map((id) => ({ id, type: 'pass' })), edges: chain });
    expect([...at.keys()]).toEqual([...IDS]);
    const xs = IDS.map((id) => at.get(id)?.x ?? NaN);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(new Set(xs).size).toBe(IDS.length);
  });

  it('the instance graph takes saved positions only as the map’s own keys', () => {
    const nodes = [{ id: 'a', type: 'pass' }, { id: 'constructor', type: 'pass' }];
    const edges = [{ from: 'a', to: 'constructor' }];
    // given: every node saved: the saved positions are used
    const saved = graphPositions({ nodes, edges, ui: { positions: { a: { x: 5, y: 6 }, constructor: { x: 400, y: 6 } } } });
    expect(saved.get('constructor')).toEqual({ x: 400, y: 6 });
    // given: `constructor` not saved (only inherited): laid out instead, both on one row
    const laid = graphPositions({ nodes, edges, ui: { positions: { a: { x: 5, y: 6 } } } });
    expect(laid.get('a')).toEqual({ x: 0, y: 0 });
    expect(laid.get('constructor')?.y).toBe(0);
    expect(laid.get('constructor')?.x).toBeGreaterThan(200);
  });
});

describe('definition ⇄ canvas', () => {
  const definition = {
    name: 'w',
    nodes: IDS.map((id) => ({ id, type: 'pass' })),
    edges: chain,
    ui: { positions: { constructor: { x: 0, y: 0 }, toString: { x: 200, y: 0 }, valueOf: { x: 400, y: 0 } } },
  };

  it('reads positions by own key only: a node without one is placed below the rest', () => {
    const r = fromDefinition(definition);
    if (!r.ok) throw new Error(r.message);
    const at = Object.fromEntries(r.doc.nodes.map((n) => [n.id, n.position]));
    expect(at['constructor']).toEqual({ x: 0, y: 0 });
    expect(at['toString']).toEqual({ x: 200, y: 0 });
    expect(at['valueOf']).toEqual({ x: 400, y: 0 });
    // hasOwnProperty and __proto__ have no saved position (not the prototype's members): a row below
    expect(at['hasOwnProperty']?.y).toBeGreaterThan(0);
    expect(at['__proto__']?.y).toBe(at['hasOwnProperty']?.y);
    expect(at['__proto__']?.x).not.toBe(at['hasOwnProperty']?.x);
  });

  it('writes every node and edge back, and a position for each node but `__proto__` (a key the engine refuses)', () => {
    const r = fromDefinition(definition);
    if (!r.ok) throw new Error(r.message);
    const out = toDefinition(r.doc) as typeof definition;
    expect(out.nodes).toEqual(definition.nodes);
    expect(out.edges).toEqual(definition.edges);
    const positions = out.ui.positions as Record<string, unknown>;
    expect(Object.keys(positions)).toEqual(['constructor', 'toString', 'hasOwnProperty', 'valueOf']);
    expect(Object.getPrototypeOf(positions)).toBe(Object.prototype);
    expect(positions['toString']).toEqual({ x: 200, y: 0 });
  });
});

describe('test-run pins', () => {
  it('a pin of node `__proto__` is an own key the request carries', () => {
    const texts = Object.fromEntries([
      ['__proto__', '{"a":1}'],
      ['constructor', '2'],
    ]) as Record<string, string>;
    const r = pinsFrom(new Set(['__proto__', 'constructor']), texts);
    if (!r.ok) throw new Error(r.message);
    expect(Object.keys(r.pins)).toEqual(['__proto__', 'constructor']);
    expect(JSON.parse(JSON.stringify(r.pins))).toEqual(JSON.parse('{"__proto__":{"a":1},"constructor":2}'));
  });

  it('a checked node without a text is not JSON, whatever its id', () => {
    expect(pinsFrom(new Set(['toString']), {})).toEqual({
      ok: false,
      message: expect.stringMatching(/^The pinned result of "toString" is not JSON: /) as unknown as string,
    });
  });
});

describe('fill template', () => {
  it('derives properties named `constructor` and `toString`, required or optional', () => {
    const t = inputTemplate({
      type: 'object',
      required: ['constructor'],
      properties: { constructor: { type: 'integer', minimum: 3 }, toString: { type: 'string', enum: ['x'] } },
    });
    expect(t.toFill).toEqual([]);
    expect(t.value).toEqual({ constructor: 3, toString: 'x' });
  });

  it('a required `valueOf` without a property schema is any value, not the prototype’s function', () => {
    const t = inputTemplate({ type: 'object', required: ['valueOf'], properties: {} });
    expect(Object.hasOwn(t.value as object, 'valueOf')).toBe(true);
    expect(typeof (t.value as { valueOf: unknown }).valueOf).not.toBe('function');
  });
});
