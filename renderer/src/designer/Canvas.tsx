/**
 * The canvas: React Flow over the designer store, with a dotted grid (snap 20 px), minimap,
 * zoom controls, palette drops at the cursor, the connection rules applied while a connection is
 * dragged (a refused target says why, in place: `connection-refused-reason`), and the store's
 * focus and fit requests (a clicked problem, an opened workflow, auto-layout). A selected node or
 * edge (both its ends and the label between them) is kept clear of the properties drawer: the
 * view pans, or zooms out, when the drawer would cover it. An empty, editable canvas says how to
 * begin (`canvas-empty-hint`; it lets the pointer through to the canvas).
 */
import {
  Background,
  BackgroundVariant,
  Controls,
  MiniMap,
  ReactFlow,
  ViewportPortal,
  useConnection,
  useNodesInitialized,
  useReactFlow,
  useStoreApi,
  type Connection,
  type FinalConnectionState,
  type FitViewOptions,
  type IsValidConnection,
  type OnConnectEnd,
} from '@xyflow/react';
import { useCallback, useEffect, useRef, type DragEvent } from 'react';
import { useDesigner, useDesignerStore } from './context';
import { DEFAULT_NODE_SIZE, GRID } from './layout';
import { edgeTypes, nodeTypes } from './node-types';
import type { AppNode, FlowEdge } from './types';
import { DND_MIME, useDnD } from './use-dnd';

const SNAP: [number, number] = [GRID, GRID];
const MULTI_SELECT_KEYS = ['Shift', 'Meta', 'Control'];
/** Fit options leaving `inset` px on the right free (the properties drawer covers them). */
export function fitOptions(inset: number): FitViewOptions<AppNode> {
  const right: `${number}px` | `${number}%` = inset > 0 ? `${inset + 24}px` : '4%';
  return { padding: { top: '6%', bottom: '6%', left: '4%', right }, maxZoom: 1.1 };
}
/** How long a refusal stays after the drag ended, ms. */
const REFUSAL_MS = 4000;

// Bottom left, beside the zoom controls: the right side is where the properties drawer opens.
const MINIMAP_STYLE = { width: 168, height: 108, marginLeft: 58 };

const MINIMAP_COLORS: Record<string, string> = {
  http: '#2563eb',
  script: '#7c3aed',
  delay: '#d97706',
  approval: '#059669',
  pass: '#64748b',
  custom: '#db2777',
};

function minimapColor(node: AppNode): string {
  return MINIMAP_COLORS[node.type ?? 'custom'] ?? '#94a3b8';
}

/** The arrowheads edges refer to. */
function Markers() {
  return (
    <svg className="rn-markers" aria-hidden="true">
      <defs>
        {[
          ['rn-arrow', '#94a3b8'],
          ['rn-arrow-error', '#dc2626'],
          ['rn-arrow-problem', '#d97706'],
        ].map(([id, color]) => (
          <marker key={id} id={id} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0 0L10 5L0 10z" fill={color} />
          </marker>
        ))}
      </defs>
    </svg>
  );
}

/** Source and target of a connection however it was dragged (output → input, or backwards). */
function endsOf(state: Pick<FinalConnectionState, 'fromNode' | 'fromHandle' | 'toNode' | 'toHandle'>): Pick<Connection, 'source' | 'target' | 'sourceHandle'> | undefined {
  if (!state.fromNode || !state.toNode) return undefined;
  if (state.fromHandle?.type === 'target') return { source: state.toNode.id, target: state.fromNode.id, sourceHandle: state.toHandle?.id ?? null };
  return { source: state.fromNode.id, target: state.toNode.id, sourceHandle: state.fromHandle?.id ?? null };
}

/** While a connection is dragged over a refused target: why, beside the pointer. */
function LiveRefusal() {
  const connection = useConnection();
  const store = useDesignerStore();
  if (!connection.inProgress || connection.isValid !== false) return null;
  const ends = endsOf(connection);
  const reason = ends ? store.getState().refusalFor(ends) : undefined;
  if (reason === undefined) return null;
  return (
    <ViewportPortal>
      <div className="rn-refusal live" role="alert" data-testid="connection-refused-reason" style={{ transform: `translate(${connection.to.x + 14}px, ${connection.to.y + 14}px)` }}>
        {reason}
      </div>
    </ViewportPortal>
  );
}

/** After a refused drop: the reason, for a few seconds. */
function LastRefusal() {
  const refusal = useDesigner((s) => s.refusal);
  const connection = useConnection((c) => c.inProgress);
  const store = useDesignerStore();
  useEffect(() => {
    if (!refusal) return;
    const timer = setTimeout(() => {
      if (store.getState().refusal?.seq === refusal.seq) store.setState({ refusal: undefined });
    }, REFUSAL_MS);
    return () => clearTimeout(timer);
  }, [refusal, store]);
  if (!refusal || connection) return null;
  return (
    <div className="rn-refusal banner" role="alert" data-testid="connection-refused-reason">
      {refusal.text}
    </div>
  );
}

/** Free room kept around a selection shown beside the drawer, px. */
const CLEAR_MARGIN = 24;

/** The one selected node or edge, as `node:<id>` / `edge:<id>`, or undefined. */
function selectedKey(s: { nodes: readonly AppNode[]; edges: readonly FlowEdge[] }): string | undefined {
  const nodes = s.nodes.filter((n) => n.selected);
  const edges = s.edges.filter((e) => e.selected);
  if (nodes.length === 1 && edges.length === 0) return `node:${nodes[0]?.id ?? ''}`;
  if (edges.length === 1 && nodes.length === 0) return `edge:${edges[0]?.id ?? ''}`;
  return undefined;
}

/** Brings focused elements into view and fits the drawing when asked. */
function ViewKeeper({ inset }: { inset: number }) {
  const store = useDesignerStore();
  const focus = useDesigner((s) => s.focus);
  const fitSeq = useDesigner((s) => s.fitSeq);
  const selected = useDesigner(selectedKey);
  const flow = useReactFlow<AppNode, FlowEdge>();
  const flowStore = useStoreApi<AppNode, FlowEdge>();
  const initialized = useNodesInitialized();
  const pendingFit = useRef(true);

  // The selection beside the drawer: its box (an edge's: both ends, the label lies between) moved
  // clear of the drawer once the pointer is done (never while a node is dragged).
  useEffect(() => {
    if (selected === undefined || inset <= 0) return;
    const timer = setTimeout(() => {
      const s = store.getState();
      if (s.nodes.some((n) => n.dragging)) return;
      const rectOf = (id: string): { x1: number; y1: number; x2: number; y2: number } | undefined => {
        const n = flow.getInternalNode(id);
        if (!n) return undefined;
        const { x, y } = n.internals.positionAbsolute;
        return { x1: x, y1: y, x2: x + (n.measured.width ?? DEFAULT_NODE_SIZE.width), y2: y + (n.measured.height ?? DEFAULT_NODE_SIZE.height) };
      };
      const [kind, id] = [selected.slice(0, 4), selected.slice(5)];
      const edge = kind === 'edge' ? s.edges.find((e) => e.id === id) : undefined;
      const rects = (edge ? [rectOf(edge.source), rectOf(edge.target)] : [rectOf(id)]).filter((r) => r !== undefined);
      if (rects.length === 0) return;
      const b = { x1: Math.min(...rects.map((r) => r.x1)), y1: Math.min(...rects.map((r) => r.y1)), x2: Math.max(...rects.map((r) => r.x2)), y2: Math.max(...rects.map((r) => r.y2)) };
      const { width, height, transform } = flowStore.getState();
      const [vx, vy, zoom] = transform;
      const room = { x1: CLEAR_MARGIN, y1: CLEAR_MARGIN, x2: width - inset - CLEAR_MARGIN, y2: height - CLEAR_MARGIN };
      if (room.x2 - room.x1 < 80 || room.y2 - room.y1 < 80) return;
      const screen = { x1: b.x1 * zoom + vx, y1: b.y1 * zoom + vy, x2: b.x2 * zoom + vx, y2: b.y2 * zoom + vy };
      if (screen.x1 >= room.x1 && screen.x2 <= room.x2 && screen.y1 >= room.y1 && screen.y2 <= room.y2) return;
      // Zoom out only when it cannot fit at this zoom; then centre it in the free part.
      const fit = Math.min(zoom, (room.x2 - room.x1) / (b.x2 - b.x1), (room.y2 - room.y1) / (b.y2 - b.y1));
      if (fit < zoom) {
        const cx = (b.x1 + b.x2) / 2;
        const cy = (b.y1 + b.y2) / 2;
        void flow.setViewport({ x: (room.x1 + room.x2) / 2 - cx * fit, y: (room.y1 + room.y2) / 2 - cy * fit, zoom: fit }, { duration: 200 });
        return;
      }
      const dx = screen.x2 > room.x2 ? room.x2 - screen.x2 : screen.x1 < room.x1 ? room.x1 - screen.x1 : 0;
      const dy = screen.y2 > room.y2 ? room.y2 - screen.y2 : screen.y1 < room.y1 ? room.y1 - screen.y1 : 0;
      void flow.setViewport({ x: vx + dx, y: vy + dy, zoom }, { duration: 200 });
    }, 150);
    return () => clearTimeout(timer);
  }, [selected, inset, flow, flowStore, store]);

  useEffect(() => {
    pendingFit.current = true;
  }, [fitSeq]);

  useEffect(() => {
    if (!pendingFit.current) return;
    if (store.getState().nodes.length === 0) {
      // An empty drawing: nothing to fit; start at 100 % so the first drop lands at its size.
      pendingFit.current = false;
      void flow.setViewport({ x: 40, y: 40, zoom: 1 });
      return;
    }
    if (!initialized) return;
    pendingFit.current = false;
    void flow.fitView(fitOptions(inset));
  }, [initialized, fitSeq, flow, store, inset]);

  useEffect(() => {
    if (!focus || focus.kind === 'workflow' || focus.id === undefined) return;
    const s = store.getState();
    const centreOf = (id: string): { x: number; y: number } | undefined => {
      const n = flow.getInternalNode(id);
      if (!n) return undefined;
      const w = n.measured.width ?? DEFAULT_NODE_SIZE.width;
      const h = n.measured.height ?? DEFAULT_NODE_SIZE.height;
      return { x: n.internals.positionAbsolute.x + w / 2, y: n.internals.positionAbsolute.y + h / 2 };
    };
    let at: { x: number; y: number } | undefined;
    if (focus.kind === 'node') at = centreOf(focus.id);
    else {
      const edge = s.edges.find((e) => e.id === focus.id);
      const a = edge ? centreOf(edge.source) : undefined;
      const b = edge ? centreOf(edge.target) : undefined;
      if (a && b) at = { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
    }
    // Centred in the part of the canvas the drawer leaves visible.
    const zoom = Math.max(flow.getZoom(), 0.9);
    if (at) void flow.setCenter(at.x + inset / 2 / zoom, at.y, { zoom, duration: 250 });
    // Only a new focus request moves the view (not `inset`: the drawer opening or closing).
  }, [focus, flow, store]);
  return null;
}

/** The canvas; `inset` px on its right are covered by the properties drawer. */
export function Canvas({ inset }: { inset: number }) {
  const store = useDesignerStore();
  const nodes = useDesigner((s) => s.nodes);
  const edges = useDesigner((s) => s.edges);
  const readOnly = useDesigner((s) => s.readOnly);
  const { screenToFlowPosition } = useReactFlow();
  const { type: draggedType, setType, canvasRef } = useDnD();

  const actions = store.getState();

  const startDrag = useCallback(() => {
    store.getState().editEnd();
    store.getState().beginBatch();
  }, [store]);

  const isValidConnection: IsValidConnection<FlowEdge> = useCallback(
    (c: FlowEdge | Connection) => store.getState().refusalFor({ source: c.source, target: c.target, sourceHandle: c.sourceHandle ?? null }) === undefined,
    [store],
  );

  const onConnectEnd: OnConnectEnd = useCallback(
    (_event, state) => {
      if (state.isValid !== false) return;
      const ends = endsOf(state);
      const reason = ends ? store.getState().refusalFor(ends) : undefined;
      if (reason !== undefined) store.getState().refuse(reason);
    },
    [store],
  );

  const onDragOver = useCallback((event: DragEvent) => {
    if (!event.dataTransfer.types.includes(DND_MIME)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'move';
  }, []);

  const onDrop = useCallback(
    (event: DragEvent) => {
      const type = event.dataTransfer.getData(DND_MIME) || draggedType;
      if (!type) return;
      event.preventDefault();
      event.stopPropagation();
      setType(undefined);
      const at = screenToFlowPosition({ x: event.clientX, y: event.clientY });
      store.getState().addNode(type, { x: at.x - DEFAULT_NODE_SIZE.width / 2, y: at.y - DEFAULT_NODE_SIZE.height / 2 });
    },
    [draggedType, screenToFlowPosition, setType, store],
  );

  return (
    <div className={`rn-canvas${readOnly ? ' read-only' : ''}`} ref={canvasRef} data-testid="designer-canvas" onDragOver={onDragOver} onDrop={onDrop}>
      <Markers />
      <ReactFlow<AppNode, FlowEdge>
        colorMode="system"
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        onNodesChange={actions.onNodesChange}
        onEdgesChange={actions.onEdgesChange}
        onConnect={actions.onConnect}
        onConnectEnd={onConnectEnd}
        isValidConnection={isValidConnection}
        onNodeDragStart={startDrag}
        onNodeDragStop={actions.endBatch}
        onSelectionDragStart={startDrag}
        onSelectionDragStop={actions.endBatch}
        nodesDraggable={!readOnly}
        nodesConnectable={!readOnly}
        edgesFocusable
        snapToGrid
        snapGrid={SNAP}
        deleteKeyCode={null}
        selectionKeyCode="Shift"
        multiSelectionKeyCode={MULTI_SELECT_KEYS}
        connectionRadius={28}
        minZoom={0.05}
        maxZoom={2.5}
        elevateEdgesOnSelect
      >
        <Background variant={BackgroundVariant.Dots} gap={GRID} size={1.2} color="var(--canvas-dots)" />
        <MiniMap<AppNode> pannable zoomable nodeColor={minimapColor} nodeStrokeWidth={0} maskColor="var(--minimap-mask)" bgColor="var(--panel)" ariaLabel="Minimap" style={MINIMAP_STYLE} position="bottom-left" />
        <Controls showInteractive={false} position="bottom-left" />
        <LiveRefusal />
        <ViewKeeper inset={inset} />
      </ReactFlow>
      <LastRefusal />
      {nodes.length === 0 && !readOnly ? (
        <div className="rn-empty-hint" data-testid="canvas-empty-hint" style={inset > 0 ? { right: inset } : undefined}>
          <strong>An empty workflow</strong>
          <span>Drag a node from the palette on the left and drop it here; then drag from a node's right handle to another node to connect them.</span>
          <span className="muted">Or import a workflow file (JSON or YAML), or drop one on this view.</span>
        </div>
      ) : null}
    </div>
  );
}

