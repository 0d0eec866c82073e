/**
 * Auto-layout with dagre: left to right, one rank per step, error edges weighted lightly so the
 * happy path stays straight. Pure: positions in, positions out.
 */
import { Graph, layout } from '@dagrejs/dagre';

/** Size a node is laid out with before the canvas has measured it, px. */
export const DEFAULT_NODE_SIZE = { width: 180, height: 80 } as const;

/** Grid the canvas snaps to, px; laid-out positions land on it too. */
export const GRID = 20;

interface LayoutNode {
  id: string;
  measured?: { width?: number; height?: number };
}

interface LayoutEdge {
  source: string;
  target: string;
  data?: { on?: string };
}

/**
 * Top-left positions for every node, by id: dagre's layered layout (rankdir LR), snapped to the
 * grid. Edges naming unknown nodes are ignored. Any valid id works, `constructor` and `__proto__`
 * too: dagre keeps nodes in plain objects, so it is given `n<index>` keys instead of the ids.
 */
export function autoLayout(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[]): Map<string, { x: number; y: number }> {
  const g = new Graph({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: 40, ranksep: 90, marginx: 0, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));
  const keys = new Map<string, string>();
  for (const n of nodes) {
    if (keys.has(n.id)) continue;
    const key = `n${keys.size}`;
    keys.set(n.id, key);
    g.setNode(key, { width: n.measured?.width ?? DEFAULT_NODE_SIZE.width, height: n.measured?.height ?? DEFAULT_NODE_SIZE.height });
  }
  let i = 0;
  for (const e of edges) {
    const from = keys.get(e.source);
    const to = keys.get(e.target);
    if (from === undefined || to === undefined || from === to) continue;
    g.setEdge(from, to, { weight: e.data?.on === 'error' ? 1 : 4, minlen: 1 }, `e${i++}`);
  }
  layout(g);
  const out = new Map<string, { x: number; y: number }>();
  for (const n of nodes) {
    const key = keys.get(n.id);
    const laid = (key === undefined ? undefined : g.node(key)) as { x: number; y: number; width: number; height: number } | undefined;
    if (!laid) continue;
    out.set(n.id, { x: snap(laid.x - laid.width / 2), y: snap(laid.y - laid.height / 2) });
  }
  return out;
}

function snap(v: number): number {
  return Math.round(v / GRID) * GRID;
}
