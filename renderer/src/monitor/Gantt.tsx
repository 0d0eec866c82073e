/**
 * The instance timeline as a Gantt chart (SVG): one row per node, a bar per attempt (running,
 * completed, failed), the waits between them (timer, approval, retry backoff), and markers for
 * what happened to the instance (started, suspended, resumed by whom, …). Hover shows details.
 *
 * A live instance that has waited long after its last activity (a suspension, an approval) would
 * squeeze every bar into the first pixels: by default the axis then ends shortly after the last
 * activity and the open waits run off its right edge (marked "→ now"); the checkbox shows the
 * whole span. The axis ticks at round steps, fewer on a narrow chart, so labels never overlap.
 *
 * Test ids: `gantt`, `gantt-fit`, `gantt-row-<nodeId>`, `gantt-bar-<nodeId>-<attempt>-<kind>`,
 * `gantt-marker-<type>`.
 */
import { useLayoutEffect, useRef, useState } from 'react';
import type { HistoryEvent, NodeState } from '../../../engine/api/contract';
import { formatDuration, formatTimestamp } from './format';
import { axisTicks, buildGantt } from './timeline';

const LABEL_W = 150;
const ROW_H = 22;
const AXIS_H = 22;

/** Props of {@link Gantt}. */
export interface GanttProps {
  history: readonly HistoryEvent[];
  nodes: readonly NodeState[];
  createdAt: number;
  endedAt: number | null;
  now: number;
  selected?: string;
  onSelect?: (nodeId: string) => void;
}

/** See the module comment. */
export function Gantt({ history, nodes, createdAt, endedAt, now, selected, onSelect }: GanttProps) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(800);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(el.clientWidth || 800);
    if (typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth || 800));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  const [fit, setFit] = useState(true);
  const g = buildGantt(history, nodes, createdAt, endedAt, now);
  const rows = ['(instance)', ...g.rows];
  let activityEnd = g.from + 1;
  for (const b of g.bars) activityEnd = Math.max(activityEnd, b.open ? b.start : b.end);
  for (const m of g.markers) activityEnd = Math.max(activityEnd, m.at);
  const clippable = g.to - activityEnd > 2 * (activityEnd - g.from);
  const axisEnd = fit && clippable ? activityEnd + Math.max(500, 0.15 * (activityEnd - g.from)) : g.to;
  const span = Math.max(1, axisEnd - g.from);
  const plotW = Math.max(100, width - LABEL_W - 48);
  const x = (t: number): number => LABEL_W + ((Math.min(t, axisEnd) - g.from) / span) * plotW;
  const rowY = (nodeId: string | null): number =>
    AXIS_H + Math.max(0, nodeId === null ? 0 : rows.indexOf(nodeId)) * ROW_H;
  const height = AXIS_H + rows.length * ROW_H + 4;
  // Round steps, as many as fit the width without labels running into each other.
  const tickLabel = (offset: number): string => `+${formatDuration(offset)}`;
  const ticks = axisTicks(span, plotW, tickLabel).map((o) => g.from + o);
  // Every label centred on its tick (the label column's header and the 48 px past the plot hold
  // the outer halves), so ticks a label and a gap apart never overlap.
  return (
    <div className="gantt" ref={ref} data-testid="gantt">
      <svg
        width={width}
        height={height}
        role="img"
        aria-label="Timeline of the instance: a bar per node attempt"
      >
        {ticks.map((t, i) => (
          <g key={i}>
            <line x1={x(t)} x2={x(t)} y1={AXIS_H - 4} y2={height} className="gantt-grid" />
            <text
              x={x(t)}
              y={12}
              className="gantt-tick"
              textAnchor="middle"
            >
              {tickLabel(t - g.from)}
            </text>
          </g>
        ))}
        {rows.map((r, i) => (
          <g
            key={r}
            data-testid={`gantt-row-${r}`}
            className={r === selected ? 'gantt-row selected' : 'gantt-row'}
            onClick={() => r !== '(instance)' && onSelect?.(r)}
          >
            <rect
              x={0}
              y={AXIS_H + i * ROW_H}
              width={width}
              height={ROW_H}
              className={i % 2 === 0 ? 'gantt-band' : 'gantt-band odd'}
            />
            <text x={8} y={AXIS_H + i * ROW_H + 15} className="gantt-label">
              {r.length > 20 ? `${r.slice(0, 19)}…` : r}
            </text>
          </g>
        ))}
        {g.bars.map((b, i) => {
          const x0 = x(b.start);
          const w = Math.max(3, x(b.end) - x0);
          const thin = b.kind === 'waiting' || b.kind === 'backoff';
          const clipped = b.end > axisEnd;
          return (
            <g key={i}>
              {clipped ? (
                <text
                  x={LABEL_W + plotW + 4}
                  y={rowY(b.nodeId) + 15}
                  className="gantt-tick"
                  textAnchor="start"
                >
                  → now
                </text>
              ) : null}
              <rect
                data-testid={`gantt-bar-${b.nodeId}-${b.attempt ?? 0}-${b.kind}`}
                className={`gantt-bar bar-${b.kind}${b.open ? ' open' : ''}`}
                x={x0}
                y={rowY(b.nodeId) + (thin ? 8 : 4)}
                width={w}
                height={thin ? 6 : ROW_H - 8}
                rx={2}
                onClick={() => onSelect?.(b.nodeId)}
              >
                <title>{`${b.label}\n${formatTimestamp(b.start)} → ${b.open ? 'now' : formatTimestamp(b.end)} (${formatDuration(b.end - b.start)})`}</title>
              </rect>
            </g>
          );
        })}
        {g.markers.map((m, i) => {
          const cx = x(m.at);
          const cy = rowY(m.nodeId) + ROW_H / 2;
          return (
            <g
              key={`m${i}`}
              data-testid={`gantt-marker-${m.type}`}
              className={`gantt-marker mk-${m.type.replace(/\./g, '-')}`}
            >
              <path d={`M ${cx} ${cy - 5} L ${cx + 5} ${cy} L ${cx} ${cy + 5} L ${cx - 5} ${cy} Z`} />
              <title>{`${m.label} — ${formatTimestamp(m.at)}`}</title>
            </g>
          );
        })}
      </svg>
      <div className="gantt-legend">
        {clippable ? (
          <label className="inline-field">
            <input
              type="checkbox"
              data-testid="gantt-fit"
              checked={fit}
              onChange={(e) => setFit(e.target.checked)}
            />
            zoom to activity ({formatDuration(g.to - activityEnd)} of waiting cut)
          </label>
        ) : null}
        {(['running', 'completed', 'failed', 'waiting', 'backoff', 'compensating'] as const).map((k) => (
          <span key={k}>
            <i className={`legend-swatch bar-${k}`} /> {k === 'backoff' ? 'retry backoff' : k}
          </span>
        ))}
        <span>
          <i className="legend-swatch diamond" /> event
        </span>
      </div>
    </div>
  );
}
