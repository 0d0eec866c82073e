/**
 * What a node card shows besides its name: the key config in a few words, and its badges. Pure.
 */
import type { NodeDef } from './types';

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A duration in ms as short text: `250 ms`, `5 s`, `1.5 min`, `2 h`, `3 d`. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 1000) return `${ms} ms`;
  const units: Array<[number, string]> = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1000, 's'],
  ];
  for (const [size, unit] of units) {
    if (ms >= size) {
      const v = ms / size;
      return `${Number.isInteger(v) ? v : v.toFixed(1)} ${unit}`;
    }
  }
  return `${ms} ms`;
}

function short(v: unknown, max = 48): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v) ?? '';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The key config of a node in one line (may be ''). */
export function configSummary(def: NodeDef): string {
  const c: Json = isRecord(def.config) ? def.config : {};
  switch (def.type) {
    case 'http':
      return `${typeof c['method'] === 'string' ? c['method'] : 'GET'} ${typeof c['url'] === 'string' ? short(c['url'], 60) : '(no url)'}`;
    case 'script': {
      const code = typeof c['code'] === 'string' ? c['code'] : '';
      const line = code.split('\n').map((l) => l.trim()).find((l) => l !== '' && !l.startsWith('//'));
      return line === undefined ? '(no code)' : short(line);
    }
    case 'delay':
      if (typeof c['durationMs'] === 'number') return `wait ${formatMs(c['durationMs'])}`;
      if (c['until'] !== undefined) return `until ${short(c['until'])}`;
      return '(no duration)';
    case 'approval':
      if (typeof c['prompt'] === 'string' && c['prompt'] !== '') return short(c['prompt']);
      return typeof c['assignee'] === 'string' ? `by ${short(c['assignee'])}` : 'waits for a person';
    case 'pass':
      return c['result'] === undefined ? 'passes its input on' : `result ${short(c['result'])}`;
    case 'subworkflow':
      return typeof c['workflow'] === 'string' ? `runs ${short(c['workflow'], 36)}${typeof c['version'] === 'number' ? ` v${c['version']}` : ''}` : '(no workflow)';
    case 'map':
      return typeof c['workflow'] === 'string' ? `${short(c['workflow'], 28)} per item of ${typeof c['items'] === 'string' ? short(c['items'], 20) : '(no items)'}` : '(no workflow)';
    case 'event':
      return typeof c['name'] === 'string' ? `waits for “${short(c['name'], 30)}”${typeof c['key'] === 'string' ? ` (key ${short(c['key'], 16)})` : ''}` : '(no event name)';
    default: {
      const entries = Object.entries(c).slice(0, 2);
      return entries.map(([k, v]) => `${k}: ${short(v, 28)}`).join(' · ');
    }
  }
}

/** One badge on a node card. */
export interface Badge {
  kind: 'retry' | 'timeout' | 'compensate' | 'join' | 'suspend';
  text: string;
  title: string;
}

/** The badges of a node: retry, timeout, compensation, join all, suspend on failure. */
export function badgesOf(def: NodeDef): Badge[] {
  const out: Badge[] = [];
  if (isRecord(def.retry)) {
    const n = def.retry['maxAttempts'];
    out.push({ kind: 'retry', text: typeof n === 'number' ? `×${n}` : 'retry', title: typeof n === 'number' ? `Retry: up to ${n} attempts` : 'Own retry policy' });
  }
  if (typeof def.timeoutMs === 'number') out.push({ kind: 'timeout', text: formatMs(def.timeoutMs), title: `Times out after ${formatMs(def.timeoutMs)}` });
  if (isRecord(def.compensate)) {
    const t = def.compensate['type'];
    out.push({ kind: 'compensate', text: 'undo', title: `Compensated by ${typeof t === 'string' ? t : 'a step'}` });
  }
  if (def.join === 'all') out.push({ kind: 'join', text: 'join all', title: 'Runs only when every incoming edge was taken' });
  if (def.onFailure === 'suspend') out.push({ kind: 'suspend', text: 'suspend', title: 'Suspends the instance for a person when it fails' });
  return out;
}
