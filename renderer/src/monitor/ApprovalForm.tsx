/**
 * Deciding one approval: its prompt and assignee, optional data (JSON; a template from the
 * approval's form schema) and a comment, then Approve or Reject. Used by the Approvals inbox and
 * by the instance detail.
 *
 * Test ids (suffix `<instanceId>-<nodeId>`): `approval-form-…`, `approval-data-…`,
 * `approval-comment-…`, `approval-approve-…`, `approval-reject-…`, `approval-error-…`.
 */
import { useState } from 'react';
import { parseJsonValue } from './diff';

/** What the form needs to know about the approval. */
export interface ApprovalTarget {
  instanceId: number;
  nodeId: string;
  prompt: string | null;
  assignee: string | null;
  form: Record<string, unknown> | null;
}

function formTemplate(form: Record<string, unknown> | null): string {
  const props =
    form && typeof form.properties === 'object' && form.properties !== null
      ? Object.keys(form.properties)
      : [];
  if (props.length === 0) return '';
  return JSON.stringify(Object.fromEntries(props.map((p) => [p, ''])), null, 1).replace(/\n\s*/g, ' ');
}

/** See the module comment. */
export function ApprovalForm({
  target,
  onDecide,
  compact = false,
}: {
  target: ApprovalTarget;
  onDecide: (approved: boolean, data: unknown, comment: string) => Promise<boolean>;
  compact?: boolean;
}) {
  const suffix = `${target.instanceId}-${target.nodeId}`;
  const [data, setData] = useState('');
  const example = formTemplate(target.form);
  const [comment, setComment] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const decide = async (approved: boolean): Promise<void> => {
    const parsed = parseJsonValue(data);
    if (!parsed.ok) {
      setError(parsed.message);
      return;
    }
    setError(undefined);
    setBusy(true);
    try {
      const ok = await onDecide(approved, parsed.value, comment.trim());
      if (!ok)
        setError(
          'The engine refused the decision (see the message); it may have been decided or changed meanwhile.',
        );
    } finally {
      setBusy(false);
    }
  };
  return (
    <div
      className={compact ? 'approval-form compact' : 'approval-form'}
      data-testid={`approval-form-${suffix}`}
    >
      {!compact ? (
        <p className="approval-prompt">
          {target.prompt ?? <span className="muted">No prompt.</span>}
          {target.assignee ? <span className="muted"> — for {target.assignee}</span> : null}
        </p>
      ) : null}
      <div className="approval-inputs">
        <input
          data-testid={`approval-data-${suffix}`}
          className="mono"
          value={data}
          placeholder={`data (JSON, optional)${example ? `, e.g. ${example}` : ''}`}
          spellCheck={false}
          onChange={(e) => setData(e.target.value)}
          aria-label="Decision data (JSON)"
        />
        <input
          data-testid={`approval-comment-${suffix}`}
          value={comment}
          placeholder="comment (optional)"
          maxLength={10_000}
          onChange={(e) => setComment(e.target.value)}
          aria-label="Comment"
        />
        <button
          type="button"
          className="approve"
          data-testid={`approval-approve-${suffix}`}
          disabled={busy}
          onClick={() => void decide(true)}
        >
          ✓ Approve
        </button>
        <button
          type="button"
          className="danger"
          data-testid={`approval-reject-${suffix}`}
          disabled={busy}
          onClick={() => void decide(false)}
        >
          ✕ Reject
        </button>
      </div>
      {error ? (
        <p className="field-error" role="alert" data-testid={`approval-error-${suffix}`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}
