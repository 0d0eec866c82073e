/**
 * Resuming a SUSPENDED instance by hand (DESIGN.md section 4): why it stopped (the failed step,
 * its error and attempts), the global variables in a JSON editor with a live diff preview of the
 * edit, and the choice — retry the failed step, skip it with a given result, or fail the instance
 * (for a failed compensation: retry it, skip it and continue the chain, or stop as FAILED). The
 * confirmation sends the edit, the choice, the actor and the version seen; history records them.
 *
 * Test ids: `resume-panel`, `resume-step`, `resume-error`, `resume-vars`, `resume-vars-error`,
 * `resume-diff`, `resume-action-retry|skip|fail`, `resume-result`, `resume-confirm`,
 * `resume-close`, `resume-refused`.
 */
import { useMemo, useState } from 'react';
import type { InstanceDetail } from '../../../engine/api/contract';
import type { ResumeRequest } from '../stores/instance-detail-store';
import { diffVariables, isEmptyDiff, parseJsonObject, parseJsonValue } from './diff';
import { DiffView } from './DiffView';
import { errorText } from './format';
import { useDetail } from './hooks';

interface Suspension {
  kind?: 'incident' | 'compensation';
  nodeId?: string;
  error?: unknown;
  attempts?: number;
}

/** See the module comment. */
export function ResumePanel({ detail, onClose }: { detail: InstanceDetail; onClose: () => void }) {
  const resume = useDetail((s) => s.resume);
  const busy = useDetail((s) => s.busy);
  const actionError = useDetail((s) => s.actionError);
  const s = (detail.suspension ?? {}) as Suspension;
  const compensation = s.kind === 'compensation';
  const original = useMemo(() => JSON.stringify(detail.variables, null, 2), [detail.variables]);
  const [text, setText] = useState(original);
  const [action, setAction] = useState<ResumeRequest['action']>('retry');
  const [result, setResult] = useState('');
  const parsed = parseJsonObject(text);
  const diff = parsed.ok ? diffVariables(detail.variables, parsed.value) : undefined;
  const parsedResult = parseJsonValue(result);
  const changed = !isEmptyDiff(diff);
  const canConfirm = parsed.ok && (action !== 'skip' || compensation || parsedResult.ok) && !busy;

  const labels: Record<ResumeRequest['action'], string> = compensation
    ? {
        retry: 'Retry the compensation',
        skip: 'Skip it and continue the chain',
        fail: 'Stop the chain: end FAILED',
      }
    : {
        retry: 'Retry the failed step',
        skip: 'Skip it with a given result',
        fail: 'Fail the instance (compensating first)',
      };

  const confirm = async (): Promise<void> => {
    if (!parsed.ok) return;
    const request: ResumeRequest = { action };
    if (changed) request.variables = parsed.value;
    if (action === 'skip' && !compensation && parsedResult.ok && parsedResult.value !== undefined)
      request.result = parsedResult.value;
    if (await resume(request)) onClose();
  };

  return (
    <section className="resume-panel" data-testid="resume-panel" aria-label="Resume the instance">
      <header>
        <h3>Resume by hand</h3>
        <button type="button" className="link" data-testid="resume-close" onClick={onClose}>
          close
        </button>
      </header>
      <p>
        {compensation ? 'The compensation of ' : 'Step '}
        <code data-testid="resume-step">{s.nodeId ?? '?'}</code> failed after {s.attempts ?? '?'} attempt
        {s.attempts === 1 ? '' : 's'}:{' '}
        <span className="error-text" data-testid="resume-error">
          {errorText(s.error)}
        </span>
      </p>
      <div className="resume-grid">
        <div>
          <label htmlFor="resume-vars" className="field-label">
            Global variables (JSON) — edit, then choose what to do
          </label>
          <textarea
            id="resume-vars"
            data-testid="resume-vars"
            className="json-editor"
            spellCheck={false}
            rows={Math.min(18, Math.max(6, original.split('\n').length))}
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
          {!parsed.ok ? (
            <p className="field-error" role="alert" data-testid="resume-vars-error">
              {parsed.message}
            </p>
          ) : null}
        </div>
        <div>
          <div className="field-label">Preview of the change</div>
          <DiffView diff={diff} testId="resume-diff" />
          <fieldset className="resume-actions">
            <legend className="field-label">Then</legend>
            {(['retry', 'skip', 'fail'] as const).map((a) => (
              <label key={a} className="radio">
                <input
                  type="radio"
                  name="resume-action"
                  data-testid={`resume-action-${a}`}
                  checked={action === a}
                  onChange={() => setAction(a)}
                />
                {labels[a]}
              </label>
            ))}
            {action === 'skip' && !compensation ? (
              <div>
                <label htmlFor="resume-result" className="field-label">
                  Result of <code>{s.nodeId}</code> (JSON; empty = null)
                </label>
                <textarea
                  id="resume-result"
                  data-testid="resume-result"
                  className="json-editor"
                  rows={3}
                  spellCheck={false}
                  value={result}
                  onChange={(e) => setResult(e.target.value)}
                />
                {!parsedResult.ok ? <p className="field-error">{parsedResult.message}</p> : null}
              </div>
            ) : null}
          </fieldset>
          <button
            type="button"
            className={action === 'fail' ? 'danger' : 'primary'}
            data-testid="resume-confirm"
            disabled={!canConfirm}
            onClick={() => void confirm()}
          >
            Confirm: {action}
            {changed
              ? ` with ${Object.keys(diff?.added ?? {}).length + (diff?.removed.length ?? 0) + Object.keys(diff?.changed ?? {}).length} variable change(s)`
              : ''}
          </button>
          {actionError ? (
            <p className="field-error" role="alert" data-testid="resume-refused">
              {actionError.code}: {actionError.message}
            </p>
          ) : null}
        </div>
      </div>
    </section>
  );
}
