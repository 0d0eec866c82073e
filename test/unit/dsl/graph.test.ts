import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../engine/errors';
import {
  buildGraph,
  entryNodes,
  findCycles,
  incomingCount,
  reachableFrom,
  topologicalOrder,
  wouldCreateCycle,
  type GraphSource,
} from '../../../engine/dsl/graph';

function graph(edges: Array<[string, string]>, ids = ['a', 'b', 'c', 'd', 'e']): GraphSource {
  return { nodes: ids.map((id) => ({ id })), edges: edges.map(([from, to]) => ({ from, to })) };
}

describe('graph utilities', () => {
  it('builds adjacency with edge ids and leaves out edges to unknown nodes', () => {
    const g = buildGraph({
      nodes: [{ id: 'a' }, { id: 'b' }],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'a', to: 'b', on: 'error' },
        { id: 'named', from: 'b', to: 'ghost' },
      ],
    });
    expect(g.nodeIds).toEqual(['a', 'b']);
    expect(g.outgoing.get('a')?.map((e) => e.id)).toEqual(['a->b', 'a-!>b']);
    expect(g.incoming.get('b')?.map((e) => [e.id, e.on, e.index])).toEqual([
      ['a->b', 'success', 0],
      ['a-!>b', 'error', 1],
    ]);
    expect(g.edges).toHaveLength(2);
  });

  it('finds entry nodes and incoming counts', () => {
    const wf = graph([
      ['a', 'c'],
      ['b', 'c'],
      ['c', 'd'],
    ]);
    expect(entryNodes(wf)).toEqual(['a', 'b', 'e']);
    expect(incomingCount(wf, 'c')).toBe(2);
    expect(incomingCount(wf, 'a')).toBe(0);
    expect(incomingCount(wf, 'nope')).toBe(0);
  });

  it('reports each cycle as a path that ends where it starts', () => {
    expect(
      findCycles(
        graph([
          ['a', 'b'],
          ['b', 'c'],
          ['c', 'a'],
          ['c', 'd'],
        ]),
      ),
    ).toEqual([['a', 'b', 'c', 'a']]);
    expect(
      findCycles(
        graph([
          ['a', 'b'],
          ['b', 'a'],
          ['c', 'd'],
          ['d', 'e'],
          ['e', 'c'],
        ]),
      ),
    ).toEqual([
      ['a', 'b', 'a'],
      ['c', 'd', 'e', 'c'],
    ]);
    expect(findCycles(graph([['d', 'd']]))).toEqual([['d', 'd']]);
    expect(
      findCycles(
        graph([
          ['a', 'b'],
          ['b', 'c'],
        ]),
      ),
    ).toEqual([]);
  });

  it('gives the shortest cycle through the earliest node of a tangle', () => {
    // a → b → c → d → a and a shortcut c → a: one report, the short way round.
    expect(
      findCycles(
        graph([
          ['a', 'b'],
          ['b', 'c'],
          ['c', 'd'],
          ['d', 'a'],
          ['c', 'a'],
        ]),
      ),
    ).toEqual([['a', 'b', 'c', 'a']]);
  });

  it('orders nodes topologically, the earliest-defined ready node first', () => {
    expect(
      topologicalOrder(
        graph([
          ['d', 'a'],
          ['c', 'a'],
          ['a', 'b'],
        ]),
      ),
    ).toEqual(['c', 'd', 'a', 'b', 'e']);
  });

  it('throws INVALID_WORKFLOW naming the cycle when there is no order', () => {
    let thrown: unknown;
    try {
      topologicalOrder(
        graph([
          ['a', 'b'],
          ['b', 'a'],
        ]),
      );
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(EngineError);
    expect((thrown as EngineError).code).toBe('INVALID_WORKFLOW');
    expect((thrown as EngineError).message).toBe('workflow has a cycle: a → b → a');
  });

  it('lists what is reachable and refuses a connection that would close a cycle', () => {
    const wf = graph([
      ['a', 'b'],
      ['b', 'c'],
      ['a', 'd'],
    ]);
    expect(reachableFrom(wf, 'a')).toEqual(['b', 'd', 'c']);
    expect(reachableFrom(wf, 'c')).toEqual([]);
    expect(wouldCreateCycle(wf, 'c', 'a')).toBe(true);
    expect(wouldCreateCycle(wf, 'b', 'b')).toBe(true);
    expect(wouldCreateCycle(wf, 'd', 'c')).toBe(false);
    expect(wouldCreateCycle(wf, 'a', 'e')).toBe(false);
  });

  it('handles a long chain without overflowing the stack', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `n${i}`);
    const edges = ids.slice(1).map((id, i): [string, string] => [`n${i}`, id]);
    const wf = graph(edges, ids);
    expect(findCycles(wf)).toEqual([]);
    expect(topologicalOrder(wf)).toHaveLength(20_000);
    expect(wouldCreateCycle(wf, 'n19999', 'n0')).toBe(true);
  });
});
