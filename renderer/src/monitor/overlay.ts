/**
 * The state overlay of an instance's graph: each node's state (colour and label), its attempts,
 * and which edges the run took (the path). Pure, so it is unit-tested apart from React Flow.
 */
import { edgeId, type Workflow } from '../../../engine/dsl/schema';
import type { HistoryEvent, NodeState } from '../../../engine/api/contract';

/** Node states drawn on the graph (lower case of the engine's node statuses). */
export const NODE_STATES = [
  'pending',
  'ready',
  'running',
  'waiting',
  'retrying',
  'completed',
  'failed',
  'skipped',
  'compensating',
  'compensated',
  'cancelled',
] as const;
/** One of {@link NODE_STATES}. */
export type NodeStateName = (typeof NODE_STATES)[number];

/** What the graph shows on one node. */
export interface NodeOverlay {
  id: string;
  state: NodeStateName;
  /** Whether the node ran at all (some attempt started). */
  ran: boolean;
  attempt: number;
  maxAttempts: number;
  /** Short text under the node's name: `attempt 2/3`, `waiting for approval`, `next try 14:03:07`. */
  detail: string;
}

/** What the graph shows on one edge. */
export interface EdgeOverlay {
  id: string;
  from: string;
  to: string;
  /** The run went along this edge. */
  taken: boolean;
  /** A `when` read a missing variable: why it was not taken (from history). */
  notTakenReason?: string;
  error: boolean;
}

const RAN: ReadonlySet<string> = new Set([
  'RUNNING',
  'WAITING',
  'RETRYING',
  'COMPLETED',
  'FAILED',
  'COMPENSATING',
  'COMPENSATED',
]);
const SUCCEEDED: ReadonlySet<string> = new Set(['COMPLETED', 'COMPENSATING', 'COMPENSATED']);

function stateName(status: string | undefined): NodeStateName {
  const s = (status ?? 'PENDING').toLowerCase();
  return (NODE_STATES as readonly string[]).includes(s) ? (s as NodeStateName) : 'pending';
}

/**
 * The overlay of `definition` (the instance's own version) for `nodes` (its node states) and
 * `history`. A node "ran" when an attempt started (attempt > 0) or it ended in a state only a run
 * reaches. An edge is taken when its source succeeded (failed, for an error edge) and its target
 * ran, unless history says the edge was not taken.
 */
export function buildOverlay(
  definition: Pick<Workflow, 'nodes' | 'edges'>,
  nodes: readonly NodeState[],
  history: readonly HistoryEvent[] = [],
): { nodes: NodeOverlay[]; edges: EdgeOverlay[] } {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const notTaken = new Map<string, string>();
  for (const e of history) {
    if (e.type !== 'edge.not_taken' || typeof e.data !== 'object' || e.data === null) continue;
    const d = e.data as { edge?: unknown; reason?: unknown };
    if (typeof d.edge === 'string')
      notTaken.set(d.edge, typeof d.reason === 'string' ? d.reason : 'not taken');
  }
  const ran = (id: string): boolean => {
    const n = byId.get(id);
    return n !== undefined && (n.attempt > 0 || RAN.has(n.status));
  };
  const overlays = definition.nodes.map((def): NodeOverlay => {
    const n = byId.get(def.id);
    const state = stateName(n?.status);
    const attempt = n?.attempt ?? 0;
    const maxAttempts = n?.maxAttempts ?? 0;
    let detail = '';
    const wait = (n?.wait ?? undefined) as { kind?: string; name?: unknown; total?: unknown; completed?: unknown; failed?: unknown } | undefined;
    if (state === 'waiting')
      detail =
        wait?.kind === 'approval'
          ? 'waiting for approval'
          : wait?.kind === 'timer'
            ? 'waiting for a timer'
            : wait?.kind === 'event'
              ? `waiting for event ${typeof wait.name === 'string' ? `“${wait.name}”` : ''}`.trim()
              : wait?.kind === 'children'
                ? `children ${Number(wait.completed ?? 0) + Number(wait.failed ?? 0)}/${Number(wait.total ?? 0)} ended`
                : 'waiting';
    else if (state === 'retrying') detail = `attempt ${attempt}/${maxAttempts} failed; retrying`;
    else if (attempt > 1 || (attempt > 0 && maxAttempts > 1 && state === 'failed'))
      detail = `attempt ${attempt}/${maxAttempts}`;
    else if (state === 'running') detail = `attempt ${attempt}/${maxAttempts}`;
    return { id: def.id, state, ran: ran(def.id), attempt, maxAttempts, detail };
  });
  const edges = definition.edges.map((e): EdgeOverlay => {
    const id = edgeId(e);
    const error = e.on === 'error';
    const from = byId.get(e.from);
    const sourceOk = error ? from?.status === 'FAILED' : from !== undefined && SUCCEEDED.has(from.status);
    const reason = notTaken.get(id);
    return {
      id,
      from: e.from,
      to: e.to,
      error,
      taken: reason === undefined && sourceOk && ran(e.to),
      ...(reason === undefined ? {} : { notTakenReason: reason }),
    };
  });
  return { nodes: overlays, edges };
}
