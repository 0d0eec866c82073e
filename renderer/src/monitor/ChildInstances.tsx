/**
 * The links between parent and child instances (issue 12): on a parent, one row per `subworkflow`
 * or `map` node that started children (`children` of `instance:get`, its latest attempt's), with
 * the child workflow, the counts by where the children are (completed, failed, running,
 * waiting, queued: items not started yet) and a link to the instance list filtered by this
 * parent (`#/instances?parent=<id>`); on a child, a link to its parent and the node that started
 * it.
 *
 * Test ids: `detail-children` (with `child-group-<nodeId>` rows: `data-total`,
 * `child-count-<nodeId>-<completed|failed|running|waiting|queued>` with `data-count`,
 * `child-list-<nodeId>`), `detail-parent` (`data-parent`), `detail-parent-open`.
 */
import type { ChildGroup, InstanceDetail } from '../../../engine/api/contract';
import { formatRoute } from '../routes';
import { EMPTY_FILTER } from '../stores/monitor-list-store';
import { formatCount } from './format';
import { useList } from './hooks';

/** The counts a group shows, in order, with the status dot each borrows. */
const COUNTS: ReadonlyArray<{ key: keyof Pick<ChildGroup, 'completed' | 'failed' | 'running' | 'waiting' | 'queued'>; label: string; dot: string }> = [
  { key: 'completed', label: 'completed', dot: 'completed' },
  { key: 'failed', label: 'failed', dot: 'failed' },
  { key: 'running', label: 'running', dot: 'running' },
  { key: 'waiting', label: 'waiting', dot: 'waiting' },
  { key: 'queued', label: 'queued', dot: 'pending' },
];

/** Opens the instance list filtered to the children of `parentId` (the filter otherwise empty). */
function useShowChildren(): (parentId: number) => void {
  const replaceFilter = useList((s) => s.replaceFilter);
  const open = useList((s) => s.open);
  return (parentId) => {
    replaceFilter({ ...EMPTY_FILTER, parentId });
    open(undefined);
  };
}

/** The children of a parent instance, by node (nothing when it started none). */
export function ChildGroups({ detail }: { detail: InstanceDetail }) {
  const showChildren = useShowChildren();
  const groups = detail.children ?? [];
  if (groups.length === 0) return null;
  const href = formatRoute({ view: 'instances', parent: detail.id });
  return (
    <section className="detail-children" data-testid="detail-children" aria-label="Child instances">
      <h3>Child instances</h3>
      <ul>
        {groups.map((g) => (
          <li key={g.nodeId} className="child-group" data-testid={`child-group-${g.nodeId}`} data-total={g.total}>
            <code>{g.nodeId}</code>{' '}
            <span className="muted">
              {g.workflow !== null ? `${g.workflow} v${g.workflowVersion ?? '?'}` : 'no child started yet'} · {formatCount(g.total)} in all
              {g.attempt > 1 ? ` · attempt ${g.attempt}` : ''}
            </span>
            <span className="child-counts">
              {COUNTS.map((c) => (
                <span key={c.key} className={`child-count${g[c.key] === 0 ? ' zero' : ''}`} data-testid={`child-count-${g.nodeId}-${c.key}`} data-count={g[c.key]}>
                  <span className={`dot dot-${c.dot}`} aria-hidden="true" />
                  {formatCount(g[c.key])} {c.label}
                </span>
              ))}
            </span>
            <a
              href={href}
              data-testid={`child-list-${g.nodeId}`}
              onClick={(e) => {
                e.preventDefault();
                showChildren(detail.id);
              }}
            >
              Show the children in the list →
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** On a child instance: which instance, and which of its nodes, started it (nothing on others). */
export function ParentLink({ detail }: { detail: InstanceDetail }) {
  const open = useList((s) => s.open);
  const parentId = detail.parentId;
  if (parentId === null || parentId === undefined) return null;
  return (
    <span className="detail-parent" data-testid="detail-parent" data-parent={parentId}>
      child of{' '}
      <a
        href={formatRoute({ view: 'instances', instance: parentId })}
        data-testid="detail-parent-open"
        onClick={(e) => {
          e.preventDefault();
          open(parentId);
        }}
      >
        #{parentId}
      </a>
      {detail.parentNodeId ? (
        <>
          {' '}
          at <code>{detail.parentNodeId}</code>
        </>
      ) : null}
    </span>
  );
}
