/**
 * Connection rules at drag time (issue 4): a new edge is refused when it would be a self-loop,
 * repeat an existing edge (same from, to and kind), or close a cycle; the reason names the path.
 *
 * The adjacency is built once per edge list (edges are immutable arrays in the store), so the
 * check React Flow runs on every pointer move over a handle costs one walk of the graph.
 */
import type { FlowEdge } from './types';

type Adjacency = Map<string, string[]>;

const adjacencyCache = new WeakMap<readonly FlowEdge[], Adjacency>();

function adjacency(edges: readonly FlowEdge[]): Adjacency {
  let adj = adjacencyCache.get(edges);
  if (adj) return adj;
  adj = new Map();
  for (const e of edges) {
    const out = adj.get(e.source);
    if (out) out.push(e.target);
    else adj.set(e.source, [e.target]);
  }
  adjacencyCache.set(edges, adj);
  return adj;
}

/** A path of node ids from `from` to `to` along edges (breadth-first: a shortest one), or undefined. */
export function findPath(edges: readonly FlowEdge[], from: string, to: string): string[] | undefined {
  const adj = adjacency(edges);
  const parent = new Map<string, string>();
  const queue = [from];
  const seen = new Set([from]);
  for (let head = 0; head < queue.length; head++) {
    const at = queue[head];
    if (at === undefined) break;
    if (at === to) {
      const path = [to];
      for (let p = parent.get(to); p !== undefined; p = parent.get(p)) path.push(p);
      return path.reverse();
    }
    for (const next of adj.get(at) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      parent.set(next, at);
      queue.push(next);
    }
  }
  return undefined;
}

/**
 * Why the edge `from → to` (an error edge when `on` is `error`) may not be drawn, or undefined
 * when it may. One line of English, e.g. `Refused: it would make a cycle a → b → c → a`.
 */
export function connectionRefusal(edges: readonly FlowEdge[], from: string, to: string, on: 'success' | 'error' = 'success'): string | undefined {
  if (from === to) return `Refused: "${from}" cannot connect to itself (a self-loop never ends)`;
  const duplicate = edges.some((e) => e.source === from && e.target === to && (e.data?.on === 'error' ? 'error' : 'success') === on);
  if (duplicate) return `Refused: ${on === 'error' ? 'an error edge' : 'an edge'} "${from}" → "${to}" already exists`;
  const back = findPath(edges, to, from);
  if (back) return `Refused: it would make a cycle ${[...back, to].map((id) => `"${id}"`).join(' → ')}`;
  return undefined;
}
