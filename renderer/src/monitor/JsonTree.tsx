/**
 * A collapsible JSON tree: objects and arrays fold (the first levels open), scalars are coloured
 * by type, long strings are cut with the full text in a tooltip.
 *
 * Test ids: `<testId>` on the tree, `json-node-<path>` on each entry (path like `order.items.0`),
 * `json-toggle-<path>` on each fold button.
 */
import { useState } from 'react';

function Scalar({ value }: { value: unknown }) {
  if (value === null) return <span className="j-null">null</span>;
  switch (typeof value) {
    case 'string': {
      const shown = value.length > 200 ? `${value.slice(0, 199)}…` : value;
      return (
        <span className="j-string" title={value.length > 200 ? value : undefined}>
          "{shown}"
        </span>
      );
    }
    case 'number':
      return <span className="j-number">{String(value)}</span>;
    case 'boolean':
      return <span className="j-bool">{String(value)}</span>;
    default:
      return <span className="j-null">{value === undefined ? 'undefined' : String(value)}</span>;
  }
}

function Entry({
  name,
  value,
  path,
  depth,
  openDepth,
}: {
  name: string | null;
  value: unknown;
  path: string;
  depth: number;
  openDepth: number;
}) {
  const isObj = typeof value === 'object' && value !== null;
  const [open, setOpen] = useState(depth < openDepth);
  const entries = isObj
    ? Array.isArray(value)
      ? value.map((v, i) => [String(i), v] as const)
      : Object.entries(value as Record<string, unknown>)
    : [];
  const label = name === null ? null : <span className="j-key">{name}: </span>;
  if (!isObj) {
    return (
      <div className="j-entry" data-testid={`json-node-${path}`}>
        {label}
        <Scalar value={value} />
      </div>
    );
  }
  const brackets = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  return (
    <div className="j-entry" data-testid={`json-node-${path}`}>
      <button
        type="button"
        className="j-toggle"
        data-testid={`json-toggle-${path}`}
        aria-expanded={open}
        onClick={() => setOpen(!open)}
      >
        {open ? '▾' : '▸'}
      </button>
      {label}
      <span className="j-brace">{brackets[0]}</span>
      {open ? (
        <div className="j-children">
          {entries.map(([k, v]) => (
            <Entry
              key={k}
              name={k}
              value={v}
              path={path === '' ? k : `${path}.${k}`}
              depth={depth + 1}
              openDepth={openDepth}
            />
          ))}
        </div>
      ) : (
        <span className="muted j-summary" onClick={() => setOpen(true)}>
          {' '}
          {entries.length} {Array.isArray(value) ? 'item' : 'key'}
          {entries.length === 1 ? '' : 's'}{' '}
        </span>
      )}
      <span className="j-brace">{brackets[1]}</span>
    </div>
  );
}

/** See the module comment. */
export function JsonTree({
  value,
  testId,
  openDepth = 2,
}: {
  value: unknown;
  testId?: string;
  openDepth?: number;
}) {
  if (value === undefined) return <span className="muted">—</span>;
  return (
    <div className="json-tree" data-testid={testId}>
      <Entry name={null} value={value} path="" depth={0} openDepth={openDepth} />
    </div>
  );
}
