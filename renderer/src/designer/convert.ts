/**
 * DSL definition ⇄ canvas document, both ways, pure.
 *
 * `fromDefinition` reads a raw definition (parsed JSON or YAML, valid or not) into nodes and edges
 * the canvas can draw; `toDefinition` writes the document back as DSL format 1 with
 * `ui.positions`, keys in the engine's export order. Every key is kept as given, so
 * import → export → import changes nothing (DESIGN.md section 3, "Export is lossless").
 */
import { edgeId, exportWorkflow, parseWorkflowText, type Workflow, type WorkflowInput } from '../../../engine/dsl';
import { autoLayout, DEFAULT_NODE_SIZE } from './layout';
import { kindOf, type AppNode, type DesignerDoc, type FlowEdge, type FlowEdgeData, type NodeDef, type WorkflowMeta } from './types';

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The DSL id of a canvas edge: its explicit id, else `from->to` (`from-!>to` for error edges). */
export function dslEdgeId(edge: Pick<FlowEdge, 'source' | 'target' | 'data'>): string {
  return edge.data?.id ?? edgeId({ from: edge.source, to: edge.target, on: edge.data?.on });
}

/** The source handle an edge leaves from. */
export function sourceHandleOf(data: FlowEdgeData | undefined): 'out' | 'error' {
  return data?.on === 'error' ? 'error' : 'out';
}

/** A canvas node for DSL node `id` with `def` at `position`. */
export function makeNode(id: string, def: NodeDef, position: { x: number; y: number }): AppNode {
  return { id, type: kindOf(def.type), position, data: { def } } as AppNode;
}

/**
 * A canvas edge `source → target`; its canvas id is the DSL id, made unique against `taken`
 * (which it is added to) when two edges share one (an invalid file may have duplicates).
 */
export function makeEdge(source: string, target: string, data: FlowEdgeData, taken?: Set<string>): FlowEdge {
  const base = dslEdgeId({ source, target, data });
  let id = base;
  if (taken) {
    for (let n = 2; taken.has(id); n++) id = `${base}#${n}`;
    taken.add(id);
  }
  return { id, type: 'flow', source, target, sourceHandle: sourceHandleOf(data), targetHandle: 'in', data };
}

/** Why a definition cannot be drawn. */
export interface NotDrawable {
  ok: false;
  message: string;
}

/**
 * Reads a raw definition into a canvas document.
 *
 * Needs an object whose `nodes` (if any) are objects with string ids, and whose `edges` (if any)
 * are objects with string `from` and `to`; anything else the validator reports later. Nodes
 * without a valid `ui.positions` entry are placed by auto-layout (all of them when none has one,
 * else in a row below the others).
 */
export function fromDefinition(raw: unknown): { ok: true; doc: DesignerDoc } | NotDrawable {
  if (!isRecord(raw)) return { ok: false, message: 'a workflow must be a JSON or YAML object' };
  const rawNodes = raw['nodes'] ?? [];
  const rawEdges = raw['edges'] ?? [];
  if (!Array.isArray(rawNodes)) return { ok: false, message: '"nodes" must be an array' };
  if (!Array.isArray(rawEdges)) return { ok: false, message: '"edges" must be an array' };
  const { nodes: _n, edges: _e, ui: rawUi, ...rest } = raw;
  const meta: WorkflowMeta = { ...(rest as WorkflowMeta) };
  let positions: Json = {};
  if (isRecord(rawUi)) {
    // Positions come back from the nodes on export; the other designer keys are kept as given.
    const { positions: p, ...uiRest } = rawUi;
    if (isRecord(p)) positions = p;
    if (Object.keys(uiRest).length > 0) meta.ui = uiRest;
  }

  const nodes: AppNode[] = [];
  const unplaced: number[] = [];
  for (let i = 0; i < rawNodes.length; i++) {
    const n: unknown = rawNodes[i];
    if (!isRecord(n)) return { ok: false, message: `nodes[${i}] must be an object` };
    const { id, ...def } = n;
    if (typeof id !== 'string' || id === '') return { ok: false, message: `nodes[${i}] needs a string "id" to be drawn` };
    // Own keys only: a node `constructor` or `toString` would read Object.prototype's member.
    const p = Object.hasOwn(positions, id) ? positions[id] : undefined;
    const placed = isRecord(p) && typeof p['x'] === 'number' && typeof p['y'] === 'number' && Number.isFinite(p['x']) && Number.isFinite(p['y']);
    if (!placed) unplaced.push(i);
    nodes.push(makeNode(id, def as NodeDef, placed ? { x: p['x'] as number, y: p['y'] as number } : { x: 0, y: 0 }));
  }
  const taken = new Set<string>();
  const edges: FlowEdge[] = [];
  for (let i = 0; i < rawEdges.length; i++) {
    const e: unknown = rawEdges[i];
    if (!isRecord(e)) return { ok: false, message: `edges[${i}] must be an object` };
    const { from, to, on, when, label, id, ...extra } = e;
    if (typeof from !== 'string' || typeof to !== 'string') return { ok: false, message: `edges[${i}] needs string "from" and "to" to be drawn` };
    const data: FlowEdgeData = {};
    if (on !== undefined) data.on = on as FlowEdgeData['on'];
    if (when !== undefined) data.when = when as string;
    if (label !== undefined) data.label = label as string;
    if (id !== undefined) data.id = id as string;
    if (Object.keys(extra).length > 0) data.extra = extra;
    edges.push(makeEdge(from, to, data, taken));
  }
  if (unplaced.length > 0) placeUnplaced(nodes, edges, unplaced);
  return { ok: true, doc: { meta, nodes, edges } };
}

/** Gives positions to the nodes at `indexes` (all: auto-layout; some: a row below the rest). */
function placeUnplaced(nodes: AppNode[], edges: FlowEdge[], indexes: number[]): void {
  if (indexes.length === nodes.length) {
    const laid = autoLayout(nodes, edges);
    for (const node of nodes) node.position = laid.get(node.id) ?? node.position;
    return;
  }
  const missing = new Set(indexes);
  let maxY = -Infinity;
  let minX = Infinity;
  nodes.forEach((n, i) => {
    if (missing.has(i)) return;
    maxY = Math.max(maxY, n.position.y);
    minX = Math.min(minX, n.position.x);
  });
  let x = minX;
  for (const i of indexes) {
    const node = nodes[i];
    if (!node) continue;
    node.position = { x, y: maxY + DEFAULT_NODE_SIZE.height + 60 };
    x += DEFAULT_NODE_SIZE.width + 40;
  }
}

/** The DSL edge of a canvas edge. */
export function toDslEdge(edge: FlowEdge): Json {
  const d = edge.data ?? {};
  const out: Json = {};
  if (d.id !== undefined) out['id'] = d.id;
  out['from'] = edge.source;
  out['to'] = edge.target;
  if (d.on !== undefined) out['on'] = d.on;
  if (d.when !== undefined) out['when'] = d.when;
  if (d.label !== undefined) out['label'] = d.label;
  if (d.extra) Object.assign(out, d.extra);
  return out;
}

/**
 * Writes a canvas document as a DSL definition with `ui.positions` (every node, in node order,
 * but a node whose id is `__proto__`: the engine refuses that key anywhere in a definition,
 * PROTOTYPE_KEY, so that node is placed again on open), keys in the engine's export order. The
 * result is plain JSON data.
 */
export function toDefinition(doc: DesignerDoc): WorkflowInput {
  const { ui, ...meta } = doc.meta;
  const positions: Record<string, { x: number; y: number }> = {};
  for (const n of doc.nodes)
    if (n.id !== '__proto__') positions[n.id] = { x: n.position.x, y: n.position.y };
  const raw: Json = {
    ...meta,
    nodes: doc.nodes.map((n) => ({ id: n.id, ...n.data.def })),
    edges: doc.edges.map(toDslEdge),
    ui: { ...(isRecord(ui) ? ui : {}), positions },
  };
  // exportWorkflow only orders keys (it reads no field as typed), so a draft that does not pass
  // the schema yet comes out in the same order as a valid one.
  return exportWorkflow(raw as unknown as Workflow);
}

/**
 * Reads a workflow file's text (JSON or YAML, by `fileName` or content) into a canvas document,
 * or says why it cannot: a syntax error (with `file:line:column`) or a shape that cannot be drawn.
 */
export function readWorkflowFile(text: string, fileName?: string): { ok: true; doc: DesignerDoc } | NotDrawable {
  let raw: unknown;
  try {
    raw = parseWorkflowText(text, fileName);
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  return fromDefinition(raw);
}
