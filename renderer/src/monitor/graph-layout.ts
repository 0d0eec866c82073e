/**
 * Where the instance graph puts its nodes: the designer's saved positions (`ui.positions`) when
 * every node has one, else a left-to-right dagre layout.
 */
import { Graph, layout } from '@dagrejs/dagre';
import type { Workflow } from '../../../engine/dsl/schema';

/** Node box size on the instance graph, px. */
export const GRAPH_NODE = { width: 200, height: 74 } as const;

/** Top-left position of every node of `definition`, by id. */
export function graphPositions(
  definition: Pick<Workflow, 'nodes' | 'edges' | 'ui'>,
): Map<string, { x: number; y: number }> {
  const saved = definition.ui?.positions;
  if (saved && definition.nodes.every((n) => saved[n.id] !== undefined)) {
    return new Map(definition.nodes.map((n) => [n.id, { x: saved[n.id]?.x ?? 0, y: saved[n.id]?.y ?? 0 }]));
  }
  const g = new Graph({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: 30, ranksep: 70, marginx: 0, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of definition.nodes) g.setNode(n.id, { width: GRAPH_NODE.width, height: GRAPH_NODE.height });
  definition.edges.forEach((e, i) => {
    if (g.hasNode(e.from) && g.hasNode(e.to) && e.from !== e.to)
      g.setEdge(e.from, e.to, { weight: e.on === 'error' ? 1 : 4 }, `e${i}`);
  });
  layout(g);
  const out = new Map<string, { x: number; y: number }>();
  for (const n of definition.nodes) {
    const p = g.node(n.id) as { x: number; y: number } | undefined;
    out.set(n.id, { x: (p?.x ?? 0) - GRAPH_NODE.width / 2, y: (p?.y ?? 0) - GRAPH_NODE.height / 2 });
  }
  return out;
}
