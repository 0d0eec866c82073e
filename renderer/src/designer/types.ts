/**
 * The designer's graph types, after React Flow's examples: each node kind is a `Node<Data, 'kind'>`
 * and the canvas works with their union, {@link AppNode}; edges are one kind, {@link FlowEdge}.
 *
 * A canvas node's `id` is the DSL node's id and `data.def` is the rest of the DSL node, kept as
 * given (unknown keys included) so import → export loses nothing. A canvas edge's `id` is an
 * internal key (the DSL id when that is unique); the DSL edge lives in `data`.
 */
import type { Edge, Node } from '@xyflow/react';
import type { WorkflowInput, WorkflowNode } from '../../../engine/dsl/schema';

/** A DSL node without its id. Keys the schema does not know are kept (validation names them). */
export type NodeDef = Omit<WorkflowNode, 'id'> & { [key: string]: unknown };

/** What every node kind carries: its DSL definition. */
export type StepData = { def: NodeDef };

/** Node kinds with their own component; every other type (custom ones) is `custom`. */
export const NODE_KINDS = ['http', 'script', 'delay', 'approval', 'pass', 'custom'] as const;
/** One of {@link NODE_KINDS}. */
export type NodeKind = (typeof NODE_KINDS)[number];

/** An `http` node. */
export type HttpNode = Node<StepData, 'http'>;
/** A `script` node. */
export type ScriptNode = Node<StepData, 'script'>;
/** A `delay` node. */
export type DelayNode = Node<StepData, 'delay'>;
/** An `approval` node. */
export type ApprovalNode = Node<StepData, 'approval'>;
/** A `pass` node. */
export type PassNode = Node<StepData, 'pass'>;
/** A node of a custom (plug-in) type. */
export type CustomNode = Node<StepData, 'custom'>;
/** Any node on the canvas. */
export type AppNode = HttpNode | ScriptNode | DelayNode | ApprovalNode | PassNode | CustomNode;

/** The canvas node kind that draws DSL type `type`. */
export function kindOf(type: unknown): NodeKind {
  switch (type) {
    case 'http':
    case 'script':
    case 'delay':
    case 'approval':
    case 'pass':
      return type;
    default:
      return 'custom';
  }
}

/** Source handle ids: normal (`out`, right side) and error (`error`, bottom) outputs. */
export type SourceHandle = 'out' | 'error';
/** The one target handle id (left side). */
export const TARGET_HANDLE = 'in';

/**
 * A DSL edge on the canvas, minus `from`/`to` (the canvas edge's `source`/`target`).
 *
 * `on` is kept exactly as given (absent means success); `id` is the explicit DSL id, absent when
 * the edge uses its default (`from->to`, `from-!>to` for error edges). `extra` keeps unknown keys.
 */
export type FlowEdgeData = {
  on?: 'success' | 'error';
  when?: string;
  label?: string;
  id?: string;
  extra?: Record<string, unknown>;
};

/** An edge on the canvas. */
export type FlowEdge = Edge<FlowEdgeData, 'flow'>;

/**
 * The workflow-level fields (everything but nodes, edges and `ui.positions`), kept as given.
 * `ui` holds the designer keys other than `positions`.
 */
export type WorkflowMeta = Omit<WorkflowInput, 'nodes' | 'edges' | 'ui'> & {
  ui?: Record<string, unknown>;
  [key: string]: unknown;
};

/** The part of the designer state that undo/redo tracks: the drawn workflow. */
export interface DesignerDoc {
  meta: WorkflowMeta;
  nodes: AppNode[];
  edges: FlowEdge[];
}

/** Whether an edge is an error edge. */
export function isErrorEdge(edge: Pick<FlowEdge, 'data'>): boolean {
  return edge.data?.on === 'error';
}
