/**
 * The graph checks of validation: duplicate ids, edges to unknown nodes, self-loops, repeated
 * edges, cycles (with their path) and the entry node (DESIGN.md section 3). They read the lenient
 * view of validate-problems.ts, so they run whatever the schema says.
 *
 * Shared with the renderer: imports nothing from Node.
 */
import { findCycles, entryNodes, type GraphSource } from './graph';
import { edgeSubject, nodeSubject, problem, type LooseEdge, type LooseNode, type Problem } from './validate-problems';

/**
 * Duplicate node and edge ids, edge ends naming no node, self-loops and repeated edges (same
 * `from`, `to` and `on`).
 */
export function checkIds(nodes: LooseNode[], edges: LooseEdge[], out: Problem[]): void {
  const firstNode = new Map<string, number>();
  for (const node of nodes) {
    if (node.id === undefined) continue;
    const first = firstNode.get(node.id);
    if (first === undefined) {
      firstNode.set(node.id, node.index);
      continue;
    }
    out.push(
      problem('DUPLICATE_ID', nodeSubject(node, node.index), `id is already used by nodes[${first}]`, [
        'nodes',
        node.index,
        'id',
      ]),
    );
  }

  const nodeIds = new Set(firstNode.keys());
  const firstEdgeId = new Map<string, number>();
  const firstLink = new Map<string, number>();
  for (const edge of edges) {
    const subject = edgeSubject(edge, edge.index);
    for (const end of ['from', 'to'] as const) {
      const target = edge[end];
      if (target !== undefined && target !== '' && !nodeIds.has(target)) {
        out.push(
          problem('UNKNOWN_NODE', subject, `${end} ${JSON.stringify(target)} is not a node`, [
            'edges',
            edge.index,
            end,
          ]),
        );
      }
    }
    if (edge.from !== undefined && edge.from === edge.to) {
      out.push(
        problem(
          'SELF_LOOP',
          { ...subject, nodeId: edge.from },
          `connects node ${JSON.stringify(edge.from)} to itself`,
          ['edges', edge.index],
        ),
      );
    }
    let duplicateLink = false;
    if (edge.from !== undefined && edge.to !== undefined) {
      const link = `${edge.from}\u0000${edge.to}\u0000${edge.on}`;
      const first = firstLink.get(link);
      if (first === undefined) firstLink.set(link, edge.index);
      else {
        duplicateLink = true;
        out.push(
          problem('DUPLICATE_EDGE', subject, `repeats edges[${first}] (same from, to and on)`, [
            'edges',
            edge.index,
          ]),
        );
      }
    }
    if (edge.id === undefined) continue;
    const first = firstEdgeId.get(edge.id);
    if (first === undefined) firstEdgeId.set(edge.id, edge.index);
    else if (!duplicateLink) {
      // Two edges between the same nodes already got DUPLICATE_EDGE; their default ids clash too.
      out.push(
        problem('DUPLICATE_ID', subject, `id is already used by edges[${first}]`, [
          'edges',
          edge.index,
          'id',
        ]),
      );
    }
  }
}

function graphSource(nodes: LooseNode[], edges: LooseEdge[]): GraphSource {
  return {
    nodes: nodes.flatMap((n) => (n.id === undefined ? [] : [{ id: n.id }])),
    edges: edges.flatMap((e) =>
      e.from === undefined || e.to === undefined ? [] : [{ id: e.id, from: e.from, to: e.to, on: e.on }],
    ),
  };
}

/**
 * Cycles (each with its path, named by its closing edge) and the entry node: a workflow without
 * nodes, or whose every node has an incoming edge, cannot start. `nodesArray` is false when
 * `nodes` is not an array, which the schema reports instead.
 */
export function checkGraph(nodes: LooseNode[], edges: LooseEdge[], nodesArray: boolean, out: Problem[]): void {
  const source = graphSource(nodes, edges);
  for (const cycle of findCycles(source)) {
    if (cycle.length <= 2) continue; // a self-loop, reported as SELF_LOOP
    const last = cycle[cycle.length - 2];
    const first = cycle[0];
    const closing = edges.find((e) => e.from === last && e.to === first);
    const p: Problem = {
      code: 'CYCLE',
      message: `node ${JSON.stringify(first)}: cycle ${cycle.join(' → ')}`,
      path: closing ? ['edges', closing.index] : ['edges'],
    };
    if (first !== undefined) p.nodeId = first;
    if (closing?.id !== undefined) p.edgeId = closing.id;
    out.push(p);
  }
  if (!nodesArray) return;
  if (nodes.length === 0) {
    out.push({
      code: 'NO_ENTRY_NODE',
      message: 'workflow has no nodes, so nothing can start',
      path: ['nodes'],
    });
  } else if (source.nodes.length > 0 && entryNodes(source).length === 0) {
    out.push({
      code: 'NO_ENTRY_NODE',
      message: 'workflow has no entry node: every node has an incoming edge, so nothing can start',
      path: ['nodes'],
    });
  }
}
