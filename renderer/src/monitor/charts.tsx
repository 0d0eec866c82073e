/**
 * Two small SVG charts for the Dashboard (no chart library): stacked bars per time bucket and
 * lines over time. Both scale to their container's width, label the y axis with a few nice
 * ticks and the x axis with bucket times, and show each bucket's numbers on hover.
 */
import { useLayoutEffect, useRef, useState } from 'react';

/** One series of a chart: a key of the points, a label and a CSS class (its colour). */
export interface Series<P> {
  key: keyof P & string;
  label: string;
  className: string;
}

const PAD = { left: 48, right: 12, top: 10, bottom: 22 };

/** The tick values of an axis from 0 to `max`. */
function tickValues(max: number, step: number): number[] {
  const ticks: number[] = [];
  for (let v = 0; v <= max + step / 2; v += step) ticks.push(v);
  return ticks;
}

/** Left padding wide enough for the longest y label ("1 min 30 s"), at ~6 px a character at 10 px. */
function leftPad(max: number, step: number, format: (v: number) => string): number {
  const longest = Math.max(0, ...tickValues(max, step).map((v) => format(v).length));
  return Math.max(PAD.left, Math.ceil(longest * 6.2) + 12);
}

/** What a chart shows instead of a degenerate axis when it has nothing to plot (same box, so its width is still observed). */
function EmptyChart({ height, text }: { height: number; text: string }) {
  return (
    <div className="chart-empty" style={{ height }}>
      <p className="muted">{text}</p>
    </div>
  );
}

function useWidth(): [React.RefObject<HTMLDivElement | null>, number] {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(600);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(el.clientWidth || 600);
    if (typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth || 600));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width];
}

/** A "nice" axis maximum at or above `max` and its tick step. */
export function niceScale(max: number, ticks = 4): { max: number; step: number } {
  if (!(max > 0)) return { max: 1, step: 1 / ticks };
  const raw = max / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  return { max: step * Math.ceil(max / step), step };
}

function timeLabel(t: number, bucketMs: number): string {
  const d = new Date(t);
  const hm = `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  return bucketMs < 60_000 ? `${hm}:${String(d.getSeconds()).padStart(2, '0')}` : hm;
}

function Axes({
  width,
  height,
  max,
  step,
  format,
  points,
  bucketMs,
  left,
}: {
  width: number;
  height: number;
  max: number;
  step: number;
  format: (v: number) => string;
  points: readonly { t: number }[];
  bucketMs: number;
  left: number;
}) {
  const plotH = height - PAD.top - PAD.bottom;
  const ticks = tickValues(max, step);
  const every = Math.max(1, Math.ceil(points.length / Math.max(2, Math.floor((width - left) / 70))));
  const bw = (width - left - PAD.right) / Math.max(1, points.length);
  return (
    <g className="axes">
      {ticks.map((v) => {
        const y = PAD.top + plotH - (v / max) * plotH;
        return (
          <g key={v}>
            <line x1={left} x2={width - PAD.right} y1={y} y2={y} className="chart-grid" />
            <text x={left - 6} y={y + 4} textAnchor="end" className="chart-tick">
              {format(v)}
            </text>
          </g>
        );
      })}
      {points.map((p, i) =>
        i % every === 0 ? (
          <text
            key={p.t}
            x={left + i * bw + bw / 2}
            y={height - 6}
            textAnchor="middle"
            className="chart-tick"
          >
            {timeLabel(p.t, bucketMs)}
          </text>
        ) : null,
      )}
    </g>
  );
}

/** Props shared by {@link StackedBars} and {@link Lines}. Times are epoch ms; `bucketMs` is a bucket's width. */
export interface ChartProps<P extends { t: number }> {
  points: readonly P[];
  series: Series<P>[];
  bucketMs: number;
  height?: number;
  testId?: string;
  format?: (v: number) => string;
  /** Shown instead of the chart when there is nothing to plot. */
  emptyText?: string;
}

/** Stacked bars per bucket. */
export function StackedBars<P extends { t: number }>({
  points,
  series,
  bucketMs,
  height = 180,
  testId,
  format = (v) => String(v),
  emptyText = 'Nothing in this range yet.',
}: ChartProps<P>) {
  const [ref, width] = useWidth();
  const total = (p: P): number => series.reduce((a, s) => a + (Number(p[s.key]) || 0), 0);
  const top = Math.max(0, ...points.map(total));
  const { max, step } = niceScale(top);
  const left = leftPad(max, step, format);
  const plotH = height - PAD.top - PAD.bottom;
  const bw = (width - left - PAD.right) / Math.max(1, points.length);
  return (
    <div className="chart" ref={ref} data-testid={testId} data-empty={!(top > 0)}>
      {!(top > 0) ? (
        <EmptyChart height={height} text={emptyText} />
      ) : (
        <svg width={width} height={height} role="img" aria-label={series.map((s) => s.label).join(', ')}>
          <Axes
            width={width}
            height={height}
            max={max}
            step={step}
            format={format}
            points={points}
            bucketMs={bucketMs}
            left={left}
          />
          {points.map((p, i) => {
            let y = PAD.top + plotH;
            return (
              <g key={p.t} className="bar-group">
                <rect x={left + i * bw} y={PAD.top} width={bw} height={plotH} className="chart-hover" />
                {series.map((s) => {
                  const v = Number(p[s.key]) || 0;
                  const h = (v / max) * plotH;
                  y -= h;
                  return v > 0 ? (
                    <rect
                      key={s.key}
                      x={left + i * bw + Math.min(1, bw * 0.1)}
                      y={y}
                      width={Math.max(1, bw - Math.min(2, bw * 0.2))}
                      height={h}
                      className={s.className}
                    />
                  ) : null;
                })}
                <title>{`${timeLabel(p.t, bucketMs)}\n${series.map((s) => `${s.label}: ${format(Number(p[s.key]) || 0)}`).join('\n')}`}</title>
              </g>
            );
          })}
        </svg>
      )}
      <Legend series={series} />
    </div>
  );
}

/** Lines over buckets (null values break the line). */
export function Lines<P extends { t: number }>({
  points,
  series,
  bucketMs,
  height = 180,
  testId,
  format = (v) => String(v),
  emptyText = 'Nothing in this range yet.',
}: ChartProps<P>) {
  const [ref, width] = useWidth();
  const values = points
    .flatMap((p) => series.map((s): unknown => p[s.key]))
    .filter((v): v is number => typeof v === 'number');
  const { max, step } = niceScale(Math.max(0, ...values));
  const left = leftPad(max, step, format);
  const plotH = height - PAD.top - PAD.bottom;
  const bw = (width - left - PAD.right) / Math.max(1, points.length);
  const xy = (i: number, v: number): [number, number] => [
    left + i * bw + bw / 2,
    PAD.top + plotH - (v / max) * plotH,
  ];
  return (
    <div className="chart" ref={ref} data-testid={testId} data-empty={values.length === 0}>
      {values.length === 0 ? (
        <EmptyChart height={height} text={emptyText} />
      ) : (
        <svg width={width} height={height} role="img" aria-label={series.map((s) => s.label).join(', ')}>
          <Axes
            width={width}
            height={height}
            max={max}
            step={step}
            format={format}
            points={points}
            bucketMs={bucketMs}
            left={left}
          />
          {series.map((s) => {
            let d = '';
            let pen = false;
            points.forEach((p, i) => {
              const v = p[s.key];
              if (typeof v !== 'number') {
                pen = false;
                return;
              }
              const [x, y] = xy(i, v);
              d += `${pen ? 'L' : 'M'} ${x.toFixed(1)} ${y.toFixed(1)} `;
              pen = true;
            });
            return (
              <g key={s.key} className={s.className}>
                <path d={d} className="chart-line" />
                {points.map((p, i) => {
                  const v = p[s.key];
                  if (typeof v !== 'number') return null;
                  const [x, y] = xy(i, v);
                  return (
                    <circle key={p.t} cx={x} cy={y} r={2.5} className="chart-dot">
                      <title>{`${timeLabel(p.t, bucketMs)} ${s.label}: ${format(v)}`}</title>
                    </circle>
                  );
                })}
              </g>
            );
          })}
        </svg>
      )}
      <Legend series={series} />
    </div>
  );
}

function Legend<P>({ series }: { series: Series<P>[] }) {
  return (
    <div className="chart-legend">
      {series.map((s) => (
        <span key={s.key}>
          <i className={`legend-swatch ${s.className}`} /> {s.label}
        </span>
      ))}
    </div>
  );
}
