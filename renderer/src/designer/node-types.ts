/**
 * The canvas's node and edge component maps, at module scope so React Flow sees the same objects
 * on every render (its error002: "define nodeTypes outside of the component").
 */
import type { EdgeTypes, NodeTypes } from '@xyflow/react';
import { FlowEdgeView } from './edges/FlowEdgeView';
import { ApprovalNodeView, CustomNodeView, DelayNodeView, HttpNodeView, PassNodeView, ScriptNodeView } from './nodes/StepNodes';
import type { NodeKind } from './types';

/** A component per node kind. */
export const nodeTypes = {
  http: HttpNodeView,
  script: ScriptNodeView,
  delay: DelayNodeView,
  approval: ApprovalNodeView,
  pass: PassNodeView,
  custom: CustomNodeView,
} satisfies Record<NodeKind, NodeTypes[string]>;

/** The one edge kind. */
export const edgeTypes = { flow: FlowEdgeView } satisfies EdgeTypes;
