/**
 * Where the instance graph puts its nodes, and where it first looks. Positions: the designer's
 * saved ones (`ui.positions`) when every node has one and every edge label has room between its
 * two boxes, else a left-to-right dagre layout that makes room for the labels. The first view:
 * the whole graph when it fits at a readable zoom, else that zoom, showing the start of the flow
 * (or the node in focus), and the rest a pan or a scroll away.
 */
import { Graph, layout } from '@dagrejs/dagre';
import type { Workflow } from '../../../engine/dsl/schema';

/** Node box size on the instance graph, px. */
export const GRAPH_NODE = { width: 200, height: 74 } as const;

/**
 * The least zoom the first view of the instance graph uses: a node 160 px wide, its 13 px title
 * at 10.4 px. A wider flow is panned (drag, scroll) rather than shrunk below it; the zoom-out
 * control still goes further for the flow's shape.
 */
export const GRAPH_MIN_FIT_ZOOM = 0.8;

/** The most the first view zooms a small graph in. */
export const GRAPH_MAX_FIT_ZOOM = 1.1;

/** Room kept around the graph in the first view, px. */
const FIT_PAD = 24;

type Point = { x: number; y: number };
type EdgeLike = Pick<Workflow['edges'][number], 'from' | 'to' | 'label' | 'when'>;

/**
 * The text an edge may show on the instance graph: its label, or "not taken" for an edge with a
 * condition (the graph says so when the run did not take it); undefined for none.
 */
export function edgeLabelText(edge: EdgeLike): string | undefined {
  return edge.label ?? (edge.when !== undefined ? 'not taken' : undefined);
}

/** Room an edge label takes on the instance graph, in flow px: 12 px text, padded (an estimate: no DOM here). */
export function edgeLabelSize(text: string): { width: number; height: number } {
  return { width: Math.ceil([...text].length * 7) + 20, height: 24 };
}

/** Whether every edge label fits between its two node boxes at the given positions (along the wider gap). */
function labelsFit(edges: readonly EdgeLike[], at: Map<string, Point>): boolean {
  return edges.every((e) => {
    const text = edgeLabelText(e);
    const a = at.get(e.from);
    const b = at.get(e.to);
    if (text === undefined || !a || !b || e.from === e.to) return true;
    const size = edgeLabelSize(text);
    const gapX = Math.abs(b.x - a.x) - GRAPH_NODE.width;
    const gapY = Math.abs(b.y - a.y) - GRAPH_NODE.height;
    return gapX >= size.width + 16 || gapY >= size.height + 16;
  });
}

/**
 * Top-left position of every node of `definition`, by id. Any valid id works, `constructor` and
 * `__proto__` too: a saved position counts only as the map's own key, and dagre (which keeps nodes
 * in plain objects) is given `n<index>` keys instead of the ids.
 */
export function graphPositions(definition: Pick<Workflow, 'nodes' | 'edges' | 'ui'>): Map<string, Point> {
  const saved = definition.ui?.positions;
  const savedAt = (id: string): Point | undefined =>
    saved !== undefined && Object.hasOwn(saved, id) ? saved[id] : undefined;
  if (definition.nodes.every((n) => savedAt(n.id) !== undefined)) {
    const at = new Map(definition.nodes.map((n) => [n.id, { x: savedAt(n.id)?.x ?? 0, y: savedAt(n.id)?.y ?? 0 }]));
    if (labelsFit(definition.edges, at)) return at;
  }
  const g = new Graph({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: 30, ranksep: 70, edgesep: 20, marginx: 0, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));
  const keys = new Map<string, string>();
  for (const n of definition.nodes) {
    if (keys.has(n.id)) continue;
    const key = `n${keys.size}`;
    keys.set(n.id, key);
    g.setNode(key, { width: GRAPH_NODE.width, height: GRAPH_NODE.height });
  }
  definition.edges.forEach((e, i) => {
    const from = keys.get(e.from);
    const to = keys.get(e.to);
    if (from === undefined || to === undefined || from === to) return;
    const text = edgeLabelText(e);
    // dagre gives a labelled edge a rank of its own for its label, so the label sits between the boxes
    const label = text === undefined ? {} : { ...edgeLabelSize(text), labelpos: 'c' };
    g.setEdge(from, to, { weight: e.on === 'error' ? 1 : 4, ...label }, `e${i}`);
  });
  layout(g);
  const out = new Map<string, Point>();
  for (const n of definition.nodes) {
    const key = keys.get(n.id);
    const p = (key === undefined ? undefined : g.node(key)) as Point | undefined;
    out.set(n.id, { x: (p?.x ?? 0) - GRAPH_NODE.width / 2, y: (p?.y ?? 0) - GRAPH_NODE.height / 2 });
  }
  return out;
}

/**
 * The instance graph's first viewport (React Flow's `{ x, y, zoom }`) for nodes at `positions` in
 * a pane of `pane` px: the whole graph centred at the zoom that fits it, between
 * {@link GRAPH_MIN_FIT_ZOOM} and {@link GRAPH_MAX_FIT_ZOOM}. A graph wider or taller than the pane
 * at the least zoom shows its left (top) end, or, when the node `focus` would be out of view
 * there, that node centred (never scrolling past the graph's ends).
 */
export function firstViewport(
  positions: ReadonlyMap<string, Point>,
  pane: { width: number; height: number },
  focus?: string,
): { x: number; y: number; zoom: number } {
  const boxes = [...positions.values()];
  if (boxes.length === 0 || pane.width <= 0 || pane.height <= 0) return { x: 0, y: 0, zoom: 1 };
  const minX = Math.min(...boxes.map((p) => p.x));
  const minY = Math.min(...boxes.map((p) => p.y));
  const maxX = Math.max(...boxes.map((p) => p.x + GRAPH_NODE.width));
  const maxY = Math.max(...boxes.map((p) => p.y + GRAPH_NODE.height));
  const fit = Math.min(
    (pane.width - 2 * FIT_PAD) / (maxX - minX),
    (pane.height - 2 * FIT_PAD) / (maxY - minY),
  );
  const zoom = Math.min(GRAPH_MAX_FIT_ZOOM, Math.max(GRAPH_MIN_FIT_ZOOM, fit));
  const focused = focus === undefined ? undefined : positions.get(focus);
  /** The offset along one axis: centred when it fits, else the start, or the focus centred within the ends. */
  const along = (
    lo: number,
    hi: number,
    size: number,
    node: number | undefined,
    nodeSize: number,
  ): number => {
    const span = (hi - lo) * zoom;
    if (span <= size - 2 * FIT_PAD) return (size - span) / 2 - lo * zoom;
    const start = FIT_PAD - lo * zoom;
    if (node === undefined || (node + nodeSize) * zoom + start <= size - FIT_PAD) return start;
    const end = size - FIT_PAD - hi * zoom;
    return Math.min(start, Math.max(end, size / 2 - (node + nodeSize / 2) * zoom));
  };
  return {
    x: along(minX, maxX, pane.width, focused?.x, GRAPH_NODE.width),
    y: along(minY, maxY, pane.height, focused?.y, GRAPH_NODE.height),
    zoom,
  };
}
