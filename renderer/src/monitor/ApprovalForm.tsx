/**
 * Deciding one approval: its prompt and assignee, the data the approval asks for, and a comment,
 * then Approve or Reject. Used by the Approvals inbox and by the instance detail.
 *
 * An approval with a `form` (a JSON Schema) gets that form rendered as fields
 * (react-jsonschema-form with {@link zodFormValidator}), checked before the decision is sent:
 * Approve needs valid data; Reject sends what was filled in, checked the same way, or nothing.
 * Without a form the data is optional JSON.
 *
 * Test ids (suffix `<instanceId>-<nodeId>`): `approval-form-…`, `approval-fields-…` (the
 * schema's form; its inputs are `approval-<suffix>_<field>`), `approval-data-…` (the JSON box,
 * without a form), `approval-comment-…`, `approval-approve-…`, `approval-reject-…`,
 * `approval-error-…`.
 */
// The component's own module: the package's index also re-exports a test helper that imports
// @rjsf/validator-ajv8, which the page cannot use (see form-validator.ts) and does not install.
import Form from '@rjsf/core/lib/components/Form.js';
import type { RJSFSchema } from '@rjsf/utils';
import { useRef, useState } from 'react';
import { parseJsonValue } from './diff';
import { zodFormValidator } from './form-validator';

/** What the form needs to know about the approval. */
export interface ApprovalTarget {
  instanceId: number;
  nodeId: string;
  prompt: string | null;
  assignee: string | null;
  form: Record<string, unknown> | null;
}

/** Whether a form's data holds anything a person typed (empty strings, objects and lists do not count). */
function filledIn(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  if (Array.isArray(value)) return value.some(filledIn);
  if (typeof value === 'object') return Object.values(value).some(filledIn);
  return true;
}

/** See the module comment. */
export function ApprovalForm({
  target,
  onDecide,
  compact = false,
}: {
  target: ApprovalTarget;
  /** Sends the decision: true when taken, else false or the refusal's message (shown here). */
  onDecide: (approved: boolean, data: unknown, comment: string) => Promise<boolean | string>;
  compact?: boolean;
}) {
  const suffix = `${target.instanceId}-${target.nodeId}`;
  const schema = target.form as RJSFSchema | null;
  const [data, setData] = useState('');
  const [formData, setFormData] = useState<unknown>(undefined);
  const formRef = useRef<Form>(null);
  const [comment, setComment] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  /** The data to send: the form's (checked), or the JSON box's (parsed); undefined when refused. */
  const collect = (approved: boolean): { value: unknown } | undefined => {
    if (schema) {
      // A rejection need not fill the form in; what it does fill in is checked too.
      if (!approved && !filledIn(formData)) return { value: undefined };
      if (!formRef.current?.validateForm()) {
        setError('Fill in the form: see the fields marked above.');
        return undefined;
      }
      return { value: formData };
    }
    const parsed = parseJsonValue(data);
    if (!parsed.ok) {
      setError(parsed.message);
      return undefined;
    }
    return { value: parsed.value };
  };
  const decide = async (approved: boolean): Promise<void> => {
    const payload = collect(approved);
    if (!payload) return;
    setError(undefined);
    setBusy(true);
    try {
      const refusal = await onDecide(approved, payload.value, comment.trim());
      if (refusal !== true)
        setError(
          `The engine refused the decision${typeof refusal === 'string' ? `: ${refusal}` : ''}; it may have been decided or changed meanwhile.`,
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
      {schema ? (
        <div className="approval-fields" data-testid={`approval-fields-${suffix}`}>
          <Form
            ref={formRef}
            schema={schema}
            validator={zodFormValidator}
            formData={formData}
            onChange={(e) => setFormData(e.formData)}
            idPrefix={`approval-${suffix}`}
            showErrorList={false}
            noHtml5Validate
            disabled={busy}
            onSubmit={() => void decide(true)}
            // The fields show their errors; without a handler rjsf logs them as console errors.
            onError={() => undefined}
          >
            {/* Approve and Reject below decide; the form has no button of its own. */}
            <></>
          </Form>
        </div>
      ) : null}
      <div className={schema ? 'approval-inputs no-data' : 'approval-inputs'}>
        {schema ? null : (
          <input
            data-testid={`approval-data-${suffix}`}
            className="mono"
            value={data}
            placeholder="data (JSON, optional)"
            spellCheck={false}
            onChange={(e) => setData(e.target.value)}
            aria-label="Decision data (JSON)"
          />
        )}
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
