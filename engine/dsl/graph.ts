/**
 * Pure graph utilities over a workflow's nodes and edges.
 *
 * Used by validation, the runtime (who runs next) and the designer (refusing a connection that
 * would close a cycle at drag time). Shared with the renderer: imports nothing from Node.
 *
 * Every function takes the minimal {@link GraphSource} shape, so a partly invalid definition (as
 * the validator sees it) works too. Edges naming an unknown node are left out of the graph; a
 * duplicated node id counts once.
 */
import { EngineError } from '../errors';
import { edgeId } from './schema';

/** The part of a workflow the graph is built from. */
export interface GraphSource {
  nodes: ReadonlyArray<{ id: string }>;
  edges: ReadonlyArray<{ id?: string; from: string; to: string; on?: 'success' | 'error'; when?: string }>;
}

/** One edge of the graph. */
export interface GraphEdge {
  /** From {@link edgeId}: the explicit id, else `from->to` (`from-!>to` for error edges). */
  id: string;
  /** Position in `workflow.edges`. */
  index: number;
  from: string;
  to: string;
  on: 'success' | 'error';
  when?: string;
}

/** Adjacency of a workflow. Lists keep the definition's order, so every walk is deterministic. */
export interface WorkflowGraph {
  /** Node ids in definition order, each once. */
  nodeIds: string[];
  /** Edges between known nodes, in definition order. */
  edges: GraphEdge[];
  /** Outgoing edges by node id (every node has an entry). */
  outgoing: Map<string, GraphEdge[]>;
  /** Incoming edges by node id (every node has an entry). */
  incoming: Map<string, GraphEdge[]>;
}

/**
 * Builds the adjacency of a workflow.
 *
 * Edges whose `from` or `to` is not a node are omitted (validation reports them as
 * UNKNOWN_NODE). O(nodes + edges).
 */
export function buildGraph(wf: GraphSource): WorkflowGraph {
  const nodeIds: string[] = [];
  const outgoing = new Map<string, GraphEdge[]>();
  const incoming = new Map<string, GraphEdge[]>();
  for (const node of wf.nodes) {
    if (outgoing.has(node.id)) continue;
    nodeIds.push(node.id);
    outgoing.set(node.id, []);
    incoming.set(node.id, []);
  }
  const edges: GraphEdge[] = [];
  wf.edges.forEach((edge, index) => {
    const out = outgoing.get(edge.from);
    const inc = incoming.get(edge.to);
    if (!out || !inc) return;
    const graphEdge: GraphEdge = {
      id: edgeId(edge),
      index,
      from: edge.from,
      to: edge.to,
      on: edge.on ?? 'success',
    };
    if (edge.when !== undefined) graphEdge.when = edge.when;
    edges.push(graphEdge);
    out.push(graphEdge);
    inc.push(graphEdge);
  });
  return { nodeIds, edges, outgoing, incoming };
}

/**
 * The entry nodes: nodes with no incoming edge (DESIGN.md section 3), in definition order.
 *
 * Error edges count as incoming: their target waits for them like any other.
 */
export function entryNodes(wf: GraphSource): string[] {
  const graph = buildGraph(wf);
  return graph.nodeIds.filter((id) => (graph.incoming.get(id) ?? []).length === 0);
}

/** Number of edges into `nodeId` (0 for an unknown node). */
export function incomingCount(wf: GraphSource, nodeId: string): number {
  return buildGraph(wf).incoming.get(nodeId)?.length ?? 0;
}

/**
 * The cycles of a workflow, one per strongly connected component.
 *
 * Each cycle is a path of node ids whose first id is repeated at the end, e.g.
 * `["a", "b", "c", "a"]`; a self-loop is `["a", "a"]`. Listing every elementary cycle can be
 * exponential, so each tangle (strongly connected component, Tarjan) yields one shortest cycle
 * through its earliest-defined node: enough to name the problem and where it is. Cycles are
 * ordered by that node's position. Returns `[]` for a DAG.
 */
export function findCycles(wf: GraphSource): string[][] {
  const graph = buildGraph(wf);
  const order = new Map(graph.nodeIds.map((id, i) => [id, i]));
  const cycles: string[][] = [];
  for (const component of stronglyConnectedComponents(graph)) {
    const members = new Set(component);
    const start = component.reduce((a, b) => ((order.get(a) ?? 0) <= (order.get(b) ?? 0) ? a : b));
    if (component.length === 1) {
      const selfLoop = (graph.outgoing.get(start) ?? []).some((e) => e.to === start);
      if (selfLoop) cycles.push([start, start]);
      continue;
    }
    const path = shortestCycleThrough(graph, start, members);
    if (path) cycles.push(path);
  }
  return cycles.sort((a, b) => (order.get(a[0] ?? '') ?? 0) - (order.get(b[0] ?? '') ?? 0));
}

/** Tarjan's algorithm, iterative so a long chain cannot overflow the stack. */
function stronglyConnectedComponents(graph: WorkflowGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;

  for (const root of graph.nodeIds) {
    if (index.has(root)) continue;
    const work: Array<{ id: string; next: number }> = [{ id: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter);
    counter++;
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      if (!frame) break;
      const out = graph.outgoing.get(frame.id) ?? [];
      const edge = out[frame.next];
      if (edge) {
        frame.next++;
        const to = edge.to;
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter);
          counter++;
          stack.push(to);
          onStack.add(to);
          work.push({ id: to, next: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.id, Math.min(low.get(frame.id) ?? 0, index.get(to) ?? 0));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.id, Math.min(low.get(parent.id) ?? 0, low.get(frame.id) ?? 0));
      if (low.get(frame.id) === index.get(frame.id)) {
        const component: string[] = [];
        for (;;) {
          const id = stack.pop();
          if (id === undefined) break;
          onStack.delete(id);
          component.push(id);
          if (id === frame.id) break;
        }
        components.push(component);
      }
    }
  }
  return components;
}

/** Breadth-first from `start` back to itself inside one component: the shortest such cycle. */
function shortestCycleThrough(
  graph: WorkflowGraph,
  start: string,
  members: Set<string>,
): string[] | undefined {
  const parent = new Map<string, string>();
  const queue: string[] = [start];
  for (let head = 0; head < queue.length; head++) {
    const id = queue[head];
    if (id === undefined) break;
    for (const edge of graph.outgoing.get(id) ?? []) {
      // A self-loop is reported on its own; here the tangle needs a cycle through other nodes.
      if (!members.has(edge.to) || edge.to === id) continue;
      if (edge.to === start) {
        const path = [start];
        for (let at: string | undefined = id; at !== undefined && at !== start; at = parent.get(at))
          path.push(at);
        path.push(start);
        // Built backwards from the closing edge; the first element was the start all along.
        return [start, ...path.slice(1, -1).reverse(), start];
      }
      if (!parent.has(edge.to) && edge.to !== start) {
        parent.set(edge.to, id);
        queue.push(edge.to);
      }
    }
  }
  return undefined;
}

/**
 * Node ids in an order where every edge goes forward (Kahn's algorithm).
 *
 * Ties keep definition order, so the order is stable across runs.
 *
 * @throws EngineError `INVALID_WORKFLOW` naming a cycle's path when the graph is not a DAG.
 */
export function topologicalOrder(wf: GraphSource): string[] {
  const graph = buildGraph(wf);
  const remaining = new Map(graph.nodeIds.map((id) => [id, (graph.incoming.get(id) ?? []).length]));
  const rank = new Map(graph.nodeIds.map((id, i) => [id, i]));
  const ready = graph.nodeIds.filter((id) => remaining.get(id) === 0);
  const order: string[] = [];
  while (ready.length > 0) {
    // Smallest definition index first: `ready` is kept sorted by insertion below.
    const id = ready.shift();
    if (id === undefined) break;
    order.push(id);
    for (const edge of graph.outgoing.get(id) ?? []) {
      const left = (remaining.get(edge.to) ?? 0) - 1;
      remaining.set(edge.to, left);
      if (left === 0) insertByRank(ready, edge.to, rank);
    }
  }
  if (order.length < graph.nodeIds.length) {
    const cycle = findCycles(wf)[0] ?? [];
    throw new EngineError('INVALID_WORKFLOW', `workflow has a cycle: ${cycle.join(' → ')}`, {
      details: { cycle },
    });
  }
  return order;
}

function insertByRank(ready: string[], id: string, rank: Map<string, number>): void {
  const r = rank.get(id) ?? 0;
  let i = ready.length;
  while (i > 0 && (rank.get(ready[i - 1] ?? '') ?? 0) > r) i--;
  ready.splice(i, 0, id);
}

/**
 * Node ids reachable from `id` by following one or more edges, breadth-first.
 *
 * `id` itself is included only when it lies on a cycle. Unknown `id` → `[]`.
 */
export function reachableFrom(wf: GraphSource, id: string): string[] {
  return reachable(buildGraph(wf), id);
}

function reachable(graph: WorkflowGraph, id: string): string[] {
  const seen = new Set<string>();
  const queue = [id];
  for (let head = 0; head < queue.length; head++) {
    const at = queue[head];
    if (at === undefined) break;
    for (const edge of graph.outgoing.get(at) ?? []) {
      if (seen.has(edge.to)) continue;
      seen.add(edge.to);
      queue.push(edge.to);
    }
  }
  return [...seen];
}

/**
 * Whether adding an edge `from → to` would make the graph cyclic.
 *
 * True for a self-loop or when `from` is already reachable from `to`. The designer calls this
 * while a connection is dragged, so it costs one walk of the graph.
 */
export function wouldCreateCycle(wf: GraphSource, from: string, to: string): boolean {
  if (from === to) return true;
  return reachable(buildGraph(wf), to).includes(from);
}
