/**
 * A view whose content arrives with a later issue: says which, so nobody mistakes it for a bug.
 */

/** A placeholder panel for `view`, naming the issue that brings it. */
export function PlaceholderView({ view, title, issue, summary }: { view: string; title: string; issue: number; summary: string }) {
  return (
    <div className="view placeholder-view" data-testid={`view-${view}`}>
      <div className="placeholder">
        <h2>{title}</h2>
        <p>{summary}</p>
        <p className="muted" data-testid={`${view}-placeholder`}>
          Coming with issue {issue}.
        </p>
      </div>
    </div>
  );
}
