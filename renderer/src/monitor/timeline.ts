/**
 * The instance timeline as data: a Gantt bar per node attempt (running, completed, failed), the
 * waits between them (timer, approval, retry backoff, an event, child instances) and markers for everything a person or the
 * engine did to the instance. Built from history (and the node states, for what is under way),
 * pure, so it is unit-tested apart from the SVG that draws it.
 */
import type { HistoryEvent, NodeState } from '../../../engine/api/contract';
import { formatDuration } from './format';

/** What a bar shows. */
export type BarKind = 'running' | 'completed' | 'failed' | 'waiting' | 'backoff' | 'compensating';

/** One bar of the Gantt chart. Times are epoch ms. */
export interface GanttBar {
  nodeId: string;
  attempt: number | null;
  start: number;
  end: number;
  kind: BarKind;
  /** Still under way: `end` is "now". */
  open: boolean;
  label: string;
}

/** A point event on the chart (a node skipped, an instance resumed by a person, …). */
export interface GanttMarker {
  /** The node's row, or null for the instance row. */
  nodeId: string | null;
  at: number;
  type: string;
  label: string;
  actor: string | null;
}

/** The whole chart. */
export interface Gantt {
  /** Node ids, one row each, in order of first activity (nodes that never ran last). */
  rows: string[];
  bars: GanttBar[];
  markers: GanttMarker[];
  from: number;
  to: number;
}

const data = (e: HistoryEvent): Record<string, unknown> =>
  typeof e.data === 'object' && e.data !== null ? (e.data as Record<string, unknown>) : {};
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Event types drawn as markers, with their label. */
const MARKERS: Record<string, string> = {
  'instance.created': 'started',
  'instance.suspended': 'suspended',
  'instance.resumed': 'resumed',
  'instance.retried': 'retried',
  'instance.cancel_requested': 'cancel requested',
  'instance.paused': 'paused',
  'instance.unpaused': 'unpaused',
  'instance.completed': 'completed',
  'instance.failed': 'failed',
  'instance.cancelled': 'cancelled',
  'approval.decided': 'decided',
  'node.skipped': 'skipped',
  'node.skipped_by_hand': 'skipped by hand',
  'node.cancelled': 'cancelled',
  'node.recovered': 'recovered',
  'compensation.completed': 'compensated',
  'compensation.failed': 'compensation failed',
  'compensation.skipped': 'compensation skipped',
  'child.failed': 'a child failed',
};

/**
 * Builds the Gantt chart of an instance from its `history` (oldest first) and `nodes`, at time
 * `now` (bars still under way end there). `startedAt` is the instance's creation time, `endedAt`
 * its end (null while live).
 */
export function buildGantt(
  history: readonly HistoryEvent[],
  nodes: readonly NodeState[],
  createdAt: number,
  endedAt: number | null,
  now: number,
): Gantt {
  const bars: GanttBar[] = [];
  const markers: GanttMarker[] = [];
  const order: string[] = [];
  const seen = (id: string | null): void => {
    if (id !== null && !order.includes(id)) order.push(id);
  };
  /** Open waits per node: where a wait bar started, and what kind of wait. */
  const waits = new Map<string, { start: number; label: string; attempt: number | null }>();
  const closeWait = (nodeId: string, at: number): void => {
    const w = waits.get(nodeId);
    if (!w) return;
    waits.delete(nodeId);
    bars.push({
      nodeId,
      attempt: w.attempt,
      start: w.start,
      end: Math.max(w.start, at),
      kind: 'waiting',
      open: false,
      label: w.label,
    });
  };
  const end = endedAt ?? now;

  for (const e of history) {
    const d = data(e);
    const node = e.nodeId;
    switch (e.type) {
      case 'node.completed':
      case 'node.failed': {
        if (node === null) break;
        seen(node);
        closeWait(node, e.at);
        const duration = num(d.durationMs);
        const failed = e.type === 'node.failed';
        bars.push({
          nodeId: node,
          attempt: e.attempt,
          start: duration === undefined ? e.at : e.at - duration,
          end: e.at,
          kind: failed ? 'failed' : 'completed',
          open: false,
          label: `${node}${e.attempt !== null ? ` #${e.attempt}` : ''} ${failed ? 'failed' : 'completed'}${duration !== undefined ? ` in ${duration} ms` : ''}`,
        });
        const next = num(d.nextAttemptAt);
        if (failed && d.willRetry === true && next !== undefined) {
          bars.push({
            nodeId: node,
            attempt: e.attempt,
            start: e.at,
            end: Math.max(e.at, next),
            kind: 'backoff',
            open: false,
            label: `${node}: retry backoff until attempt ${(e.attempt ?? 0) + 1}`,
          });
        }
        break;
      }
      case 'timer.started':
        if (node === null) break;
        seen(node);
        waits.set(node, { start: e.at, label: `${node}: timer`, attempt: e.attempt });
        break;
      case 'approval.requested':
        if (node === null) break;
        seen(node);
        waits.set(node, { start: e.at, label: `${node}: waiting for approval`, attempt: e.attempt });
        break;
      case 'event.waiting':
        if (node === null) break;
        seen(node);
        waits.set(node, { start: e.at, label: `${node}: waiting for event “${String(d.name)}”`, attempt: e.attempt });
        break;
      case 'children.started': {
        if (node === null) break;
        seen(node);
        const items = num(d.items) ?? 0;
        waits.set(node, { start: e.at, label: `${node}: waiting for ${items === 1 ? 'a child instance' : `${items} child instances`} of ${String(d.workflow)}`, attempt: e.attempt });
        break;
      }
      case 'event.received':
        // On the node that took it; an event kept for later is on the instance's row.
        markers.push({
          nodeId: node,
          at: e.at,
          type: e.type,
          label: `event “${String(d.name)}”${typeof d.key === 'string' ? ` (key ${d.key})` : ''} ${typeof d.consumedBy === 'string' ? 'received' : 'kept'}${e.actor ? ` from ${e.actor}` : ''}`,
          actor: e.actor,
        });
        break;
      case 'instance.unpaused': {
        const pausedMs = num(d.pausedMs);
        markers.push({
          nodeId: null,
          at: e.at,
          type: e.type,
          label: `unpaused${pausedMs === undefined ? '' : ` after ${formatDuration(pausedMs)} paused`}${e.actor ? ` by ${e.actor}` : ''}`,
          actor: e.actor,
        });
        break;
      }
      case 'approval.decided':
        if (node !== null) closeWait(node, e.at);
        markers.push({
          nodeId: node,
          at: e.at,
          type: e.type,
          label: `${d.approved === true ? 'approved' : 'rejected'}${e.actor ? ` by ${e.actor}` : ''}`,
          actor: e.actor,
        });
        break;
      default: {
        const label = MARKERS[e.type];
        if (label === undefined) break;
        if (node !== null && e.type !== 'instance.suspended' && e.type !== 'instance.resumed') seen(node);
        if (node !== null && (e.type === 'node.cancelled' || e.type === 'node.skipped_by_hand'))
          closeWait(node, e.at);
        const onNode = e.type.startsWith('node.') || e.type.startsWith('compensation.') || e.type === 'child.failed';
        markers.push({
          nodeId: onNode ? node : null,
          at: e.at,
          type: e.type,
          label: `${label}${e.actor ? ` by ${e.actor}` : ''}`,
          actor: e.actor,
        });
      }
    }
  }
  // What is under way now, from the node states.
  for (const n of nodes) {
    const w = waits.get(n.id);
    if (w && n.status === 'WAITING') {
      waits.delete(n.id);
      bars.push({
        nodeId: n.id,
        attempt: w.attempt,
        start: w.start,
        end: Math.max(w.start, end),
        kind: 'waiting',
        open: true,
        label: w.label,
      });
    }
    if (n.status === 'RUNNING' && n.startedAt !== null) {
      seen(n.id);
      bars.push({
        nodeId: n.id,
        attempt: n.attempt,
        start: n.startedAt,
        end: Math.max(n.startedAt, end),
        kind: 'running',
        open: true,
        label: `${n.id} #${n.attempt} running`,
      });
    }
    if (n.status === 'COMPENSATING') {
      seen(n.id);
      const since = n.endedAt ?? n.startedAt ?? end;
      bars.push({
        nodeId: n.id,
        attempt: null,
        start: since,
        end: Math.max(since, end),
        kind: 'compensating',
        open: true,
        label: `${n.id}: compensating`,
      });
    }
  }
  // Waits whose end history does not show (the instance ended meanwhile): close them at its end.
  for (const [nodeId] of waits) closeWait(nodeId, end);
  for (const n of nodes) seen(n.id);
  let to = Math.max(end, createdAt + 1);
  for (const b of bars) to = Math.max(to, b.end);
  for (const m of markers) to = Math.max(to, m.at);
  return { rows: order, bars, markers, from: createdAt, to };
}

/** Steps an axis of durations may tick by, ms: round values a person reads at a glance. */
const TICK_STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000,
  900_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000, 172_800_000, 604_800_000,
];

/**
 * Ticks for a duration axis `spanMs` long drawn `widthPx` wide: offsets from the start, ms, at a
 * round step chosen so that no two labels (as `label` writes them, about `charPx` per
 * character, at least `gapPx` apart) overlap. Always 0, then every step that fits inside the span;
 * so a narrow chart gets fewer ticks, a wide one more.
 */
export function axisTicks(
  spanMs: number,
  widthPx: number,
  label: (offsetMs: number) => string,
  charPx = 7,
  gapPx = 14,
): number[] {
  if (!(spanMs > 0) || !(widthPx > 0)) return [0];
  const pxPerMs = widthPx / spanMs;
  for (const step of TICK_STEPS) {
    const n = Math.floor(spanMs / step);
    // More ticks than could ever fit (a label takes more than a few px): a longer step.
    if (n * (charPx * 3 + gapPx) > widthPx) continue;
    // The widest label this step writes (not always the last: `+900 ms` is wider than `+1.2 s`).
    let widest = 0;
    for (let k = 0; k <= n; k++) widest = Math.max(widest, label(k * step).length);
    if (step * pxPerMs >= widest * charPx + gapPx) return Array.from({ length: n + 1 }, (_, k) => k * step);
  }
  return [0];
}
