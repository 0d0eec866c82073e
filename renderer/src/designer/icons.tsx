/**
 * Node type icons: the `icon` names `node:types` gives (`arrow-right`, `code`, `globe`, `clock`,
 * `check`, `workflow`, `layers`, `bell`, …) as small inline SVGs; an unknown name gets a box.
 */
import { memo } from 'react';

const PATHS: Record<string, string> = {
  'arrow-right': 'M4 12h14M13 6l6 6-6 6',
  code: 'M8 7l-5 5 5 5M16 7l5 5-5 5M14 4l-4 16',
  globe: 'M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18M3 12h18M12 3c3 3.2 3 14.8 0 18M12 3c-3 3.2-3 14.8 0 18',
  clock: 'M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18M12 7v5l3 2',
  check: 'M4 12l5 5L20 6',
  database: 'M4 6c0-1.7 3.6-3 8-3s8 1.3 8 3-3.6 3-8 3-8-1.3-8-3zM4 6v12c0 1.7 3.6 3 8 3s8-1.3 8-3V6M4 12c0 1.7 3.6 3 8 3s8-1.3 8-3',
  file: 'M6 3h8l4 4v14H6zM14 3v4h4',
  mail: 'M3 6h18v12H3zM3 6l9 7 9-7',
  box: 'M4 8l8-4 8 4v8l-8 4-8-4zM4 8l8 4 8-4M12 12v8',
  // The control-flow types (engine/nodes/control-flow.ts): a call of another workflow, one child per item, an event.
  workflow: 'M3 4h7v6H3zM14 14h7v6h-7zM6.5 10v3.5a3.5 3.5 0 0 0 3.5 3.5h4',
  layers: 'M12 3L2 8l10 5 10-5zM2 16l10 5 10-5M2 12l10 5 10-5',
  bell: 'M18 9a6 6 0 0 0-12 0c0 7-3 8-3 8h18s-3-1-3-8M10.3 20a2 2 0 0 0 3.4 0',
};

/** An icon by name (18 px, current colour). */
export const TypeIcon = memo(function TypeIcon({ name, size = 16 }: { name: string | undefined; size?: number }) {
  const d = PATHS[name ?? ''] ?? PATHS['box'];
  return (
    <svg className="rn-icon" width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth={2} strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
      <path d={d} />
    </svg>
  );
});

const BADGE_PATHS: Record<string, string> = {
  retry: 'M20 11a8 8 0 1 0-2.3 5.7M20 4v7h-7',
  timeout: 'M12 4a8 8 0 1 0 0 16a8 8 0 1 0 0-16M12 8v4l3 2',
  compensate: 'M9 14l-5-5 5-5M4 9h10a6 6 0 0 1 0 12h-3',
  join: 'M6 4v6a6 6 0 0 0 6 6 6 6 0 0 0 6-6V4M12 16v4',
  suspend: 'M9 5v14M15 5v14',
  problems: 'M12 3l10 18H2zM12 10v5M12 18v.5',
};

/** A badge's icon (11 px, current colour). */
export const BadgeIcon = memo(function BadgeIcon({ kind }: { kind: string }) {
  const d = BADGE_PATHS[kind];
  if (d === undefined) return null;
  return (
    <svg className="rn-badge-icon" width={11} height={11} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth={2.6} strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
      <path d={d} />
    </svg>
  );
});
