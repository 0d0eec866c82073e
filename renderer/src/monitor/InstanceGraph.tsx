/**
 * The graph of the instance's own workflow version, read-only, with each node's state drawn on
 * it (colour, an icon so the state does not rest on colour alone, the state's name, attempts) and
 * the path taken (edges the run went along are solid and dark; the others faint and dashed).
 * Clicking a node selects it for the node panel.
 *
 * It opens at a readable size (graph-layout.ts, `firstViewport`): a flow too wide for the pane
 * is not shrunk below {@link GRAPH_MIN_FIT_ZOOM} but shows its start (or the node in focus) and
 * pans by drag or by scrolling over it (Ctrl + wheel or a pinch zooms); edge labels sit in room
 * the layout keeps for them between the boxes, on a background, above the edges.
 *
 * Test ids: `instance-graph`; per node `graph-node-<id>` with `data-state` (lower-case node
 * status), `data-ran` and `data-attempt`; React Flow's own `rf__edge-<edgeId>` carry the class
 * `edge-taken` or `edge-idle`.
 */
import '@xyflow/react/dist/style.css';
import {
  Background,
  Controls,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  type Edge,
  type Node,
  type NodeProps,
  type ReactFlowInstance,
} from '@xyflow/react';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { HistoryEvent, NodeState } from '../../../engine/api/contract';
import type { Workflow } from '../../../engine/dsl/schema';
import { firstViewport, graphPositions, GRAPH_MAX_FIT_ZOOM, GRAPH_MIN_FIT_ZOOM } from './graph-layout';
import { buildOverlay, type NodeOverlay, type NodeStateName } from './overlay';

/** A glyph per state, so states differ by more than colour. */
export const STATE_ICON: Record<NodeStateName, string> = {
  pending: '○',
  ready: '◔',
  running: '▶',
  waiting: '‖',
  retrying: '↻',
  completed: '✓',
  failed: '✕',
  skipped: '»',
  compensating: '↺',
  compensated: '↶',
  cancelled: '⊘',
};

type StateNodeData = { label: string; nodeId: string; type: string; overlay: NodeOverlay; selected: boolean };
type StateNode = Node<StateNodeData, 'state'>;

function StateNodeView({ data }: NodeProps<StateNode>) {
  const { overlay } = data;
  return (
    <div
      className={`gnode gstate-${overlay.state}${overlay.ran ? ' ran' : ''}${data.selected ? ' gselected' : ''}`}
      data-testid={`graph-node-${data.nodeId}`}
      data-state={overlay.state}
      data-ran={overlay.ran}
      data-attempt={overlay.attempt}
      title={`${data.nodeId} (${data.type}): ${overlay.state}${overlay.detail ? ` — ${overlay.detail}` : ''}`}
    >
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <div className="gnode-title">
        <span className="gicon" aria-hidden="true">
          {STATE_ICON[overlay.state]}
        </span>
        <span className="ellipsis">{data.label}</span>
      </div>
      <div className="gnode-sub ellipsis">
        {data.nodeId} · {data.type}
      </div>
      <div className="gnode-state">
        {overlay.state}
        {overlay.detail ? <span className="gnode-detail"> · {overlay.detail}</span> : null}
      </div>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
}

const nodeTypes = { state: StateNodeView };

/** Props of {@link InstanceGraph}. */
export interface InstanceGraphProps {
  definition: Workflow;
  nodes: readonly NodeState[];
  history: readonly HistoryEvent[];
  selected: string | undefined;
  onSelect: (nodeId: string) => void;
}

/** See the module comment. */
export function InstanceGraph({ definition, nodes, history, selected, onSelect }: InstanceGraphProps) {
  const positions = useMemo(() => graphPositions(definition), [definition]);
  const overlay = useMemo(() => buildOverlay(definition, nodes, history), [definition, nodes, history]);
  const rfNodes = useMemo<StateNode[]>(
    () =>
      definition.nodes.map((n) => {
        const o = overlay.nodes.find((x) => x.id === n.id) ?? {
          id: n.id,
          state: 'pending',
          ran: false,
          attempt: 0,
          maxAttempts: 0,
          detail: '',
        };
        return {
          id: n.id,
          type: 'state',
          position: positions.get(n.id) ?? { x: 0, y: 0 },
          data: {
            label: n.name ?? n.id,
            nodeId: n.id,
            type: n.type,
            overlay: o,
            selected: n.id === selected,
          },
          draggable: false,
          connectable: false,
        };
      }),
    [definition, overlay, positions, selected],
  );
  const rfEdges = useMemo<Edge[]>(
    () =>
      // buildOverlay keeps the definition's edge order.
      overlay.edges.map((e, i) => {
        const src = definition.edges[i];
        return {
          id: e.id,
          source: e.from,
          target: e.to,
          className: `${e.taken ? 'edge-taken' : 'edge-idle'}${e.error ? ' edge-error' : ''}`,
          label: src?.label ?? (e.notTakenReason ? 'not taken' : undefined),
          animated: false,
          markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
          labelStyle: { fontSize: 12 },
          labelBgPadding: [6, 3] as [number, number],
          labelBgBorderRadius: 4,
          selectable: false,
        };
      }),
    [overlay, definition],
  );
  const pane = useRef<HTMLDivElement>(null);
  const [flow, setFlow] = useState<ReactFlowInstance<StateNode, Edge> | undefined>(undefined);
  // The first view is placed once per layout, and once more when the node in focus is first known
  // (the detail picks it after loading); later selections do not move the view.
  const placed = useRef<{ positions: Map<string, { x: number; y: number }>; focused: boolean } | undefined>(
    undefined,
  );
  useEffect(() => {
    const box = pane.current;
    if (!flow || !box) return;
    const last = placed.current;
    if (last && last.positions === positions && (last.focused || selected === undefined)) return;
    void flow.setViewport(
      firstViewport(positions, { width: box.clientWidth, height: box.clientHeight }, selected),
    );
    placed.current = { positions, focused: selected !== undefined };
  }, [flow, positions, selected]);
  return (
    <div className="instance-graph" data-testid="instance-graph" ref={pane}>
      <ReactFlow
        nodes={rfNodes}
        edges={rfEdges}
        nodeTypes={nodeTypes}
        nodesDraggable={false}
        nodesConnectable={false}
        edgesFocusable={false}
        colorMode="system"
        onInit={setFlow}
        minZoom={0.2}
        panOnScroll
        onNodeClick={(_, node) => onSelect(node.id)}
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={20} size={1} />
        <Controls
          showInteractive={false}
          fitViewOptions={{ padding: 0.05, minZoom: GRAPH_MIN_FIT_ZOOM, maxZoom: GRAPH_MAX_FIT_ZOOM }}
        />
      </ReactFlow>
    </div>
  );
}
