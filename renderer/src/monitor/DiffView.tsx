/**
 * A variables diff as lines: `+ key: value` (added), `− key` (removed), `~ key: before → after`
 * (changed). Used by the resume preview and by history.
 */
import type { VariablesDiff } from './diff';
import { isEmptyDiff } from './diff';
import { previewJson } from './format';

/** See the module comment. */
export function DiffView({ diff, testId }: { diff: VariablesDiff | undefined; testId?: string }) {
  if (!diff || isEmptyDiff(diff)) {
    return (
      <div className="diff empty" data-testid={testId}>
        <span className="muted">variables unchanged</span>
      </div>
    );
  }
  return (
    <div className="diff" data-testid={testId}>
      {Object.entries(diff.added).map(([k, v]) => (
        <div key={`a-${k}`} className="diff-line diff-added" data-key={k}>
          + <code>{k}</code>: <code>{previewJson(v, 200)}</code>
        </div>
      ))}
      {diff.removed.map((k) => (
        <div key={`r-${k}`} className="diff-line diff-removed" data-key={k}>
          − <code>{k}</code>
        </div>
      ))}
      {Object.entries(diff.changed).map(([k, c]) => (
        <div key={`c-${k}`} className="diff-line diff-changed" data-key={k}>
          ~ <code>{k}</code>: <code className="diff-from">{previewJson(c.from, 120)}</code> →{' '}
          <code className="diff-to">{previewJson(c.to, 120)}</code>
        </div>
      ))}
    </div>
  );
}
