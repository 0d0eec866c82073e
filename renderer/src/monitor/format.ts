/**
 * How the monitor writes times, durations and values: one place, so the list, the detail and the
 * dashboard agree.
 */

/** A duration in ms as `850 ms`, `4.2 s`, `3 min 20 s`, `2 h 5 min`, `3 d 4 h`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const v = Math.max(0, ms);
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 60_000) return `${(v / 1000).toFixed(v < 10_000 ? 1 : 0)} s`;
  const s = Math.floor(v / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 > 0 ? ` ${s % 60} s` : ''}`;
  const m = Math.floor(s / 60);
  if (m < 24 * 60) return `${Math.floor(m / 60)} h${m % 60 > 0 ? ` ${m % 60} min` : ''}`;
  const h = Math.floor(m / 60);
  return `${Math.floor(h / 24)} d${h % 24 > 0 ? ` ${h % 24} h` : ''}`;
}

/**
 * A duration in ms as a table cell writes it, two units at most without spaces inside: `850ms`,
 * `4.2s`, `3m 20s`, `2h 5m`, `3d 4h` (the instance table's Duration, Next retry and Waiting for,
 * whose columns hold `approval 1h 16m` at 1440 px where `1 h 16 min` was cut).
 */
export function formatDurationShort(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const v = Math.max(0, ms);
  if (v < 1000) return `${Math.round(v)}ms`;
  if (v < 60_000) return `${(v / 1000).toFixed(v < 10_000 ? 1 : 0)}s`;
  const s = Math.floor(v / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 > 0 ? ` ${s % 60}s` : ''}`;
  const m = Math.floor(s / 60);
  if (m < 24 * 60) return `${Math.floor(m / 60)}h${m % 60 > 0 ? ` ${m % 60}m` : ''}`;
  const h = Math.floor(m / 60);
  return `${Math.floor(h / 24)}d${h % 24 > 0 ? ` ${h % 24}h` : ''}`;
}

/** `in 3s` / `4m ago` relative to `now`, as {@link formatDurationShort} writes durations. */
export function formatRelativeShort(ms: number | null | undefined, now: number = Date.now()): string {
  if (ms === null || ms === undefined) return '—';
  const delta = ms - now;
  if (Math.abs(delta) < 1000) return 'now';
  return delta > 0 ? `in ${formatDurationShort(delta)}` : `${formatDurationShort(-delta)} ago`;
}

/** Bytes as B / KiB / MiB / GiB with three significant digits. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${units[u]}`;
}

/** An epoch-ms time: `14:03:07` today, `12 Mar 14:03` on other days; `—` for none. */
export function formatTime(ms: number | null | undefined, now: number = Date.now()): string {
  if (ms === null || ms === undefined) return '—';
  const d = new Date(ms);
  const today = new Date(now);
  const sameDay =
    d.getFullYear() === today.getFullYear() &&
    d.getMonth() === today.getMonth() &&
    d.getDate() === today.getDate();
  const time = d.toLocaleTimeString(undefined, {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
  });
  if (sameDay) return time;
  return `${d.toLocaleDateString(undefined, { day: 'numeric', month: 'short' })} ${time.slice(0, 5)}`;
}

/** A full timestamp for tooltips: ISO-like local time with milliseconds. */
export function formatTimestamp(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '';
  const d = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** `in 3 s` / `4 min ago` relative to `now`. */
export function formatRelative(ms: number | null | undefined, now: number = Date.now()): string {
  if (ms === null || ms === undefined) return '—';
  const delta = ms - now;
  if (Math.abs(delta) < 1000) return 'now';
  return delta > 0 ? `in ${formatDuration(delta)}` : `${formatDuration(-delta)} ago`;
}

/** A count with thousands separators. */
export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : n.toLocaleString('en-US');
}

/** A JSON value on one line, cut to `max` characters. */
export function previewJson(value: unknown, max = 120): string {
  let s: string;
  try {
    s = value === undefined ? '' : JSON.stringify(value);
  } catch {
    s = String(value);
  }
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/**
 * The one-line text of a serialized engine error (`CODE: message`), or of anything else. A
 * script's error whose `details` place it in the code (`line`, `column`: 1-based, in the user's
 * own code) says where when its message does not already.
 */
export function errorText(error: unknown): string {
  if (error === null || error === undefined) return '';
  if (typeof error === 'object') {
    const e = error as { code?: unknown; message?: unknown; details?: unknown };
    let message = typeof e.message === 'string' ? e.message : previewJson(error, 400);
    const place = e.details as { line?: unknown; column?: unknown } | null | undefined;
    if (e.code === 'SCRIPT_ERROR' && typeof place?.line === 'number' && !/\(line \d+/u.test(message)) {
      message += typeof place.column === 'number' ? ` (line ${place.line}, column ${place.column})` : ` (line ${place.line})`;
    }
    return typeof e.code === 'string' ? `${e.code}: ${message}` : message;
  }
  return String(error);
}
