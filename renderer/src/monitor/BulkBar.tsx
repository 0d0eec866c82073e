/**
 * Bulk actions over the current filter: retry the FAILED instances, or cancel the live ones (with
 * or without compensation). A click first counts what the action would touch (a dry run) and
 * shows the number and the first ids; only a confirmation runs it, on that same set (instances
 * started since the count are left alone). The result says how many changed and which were
 * skipped (changed meanwhile).
 *
 * Test ids: `bulk-retry`, `bulk-cancel`, `bulk-preview` (`data-count`, `data-action`),
 * `bulk-compensate`, `bulk-confirm`, `bulk-dismiss`, `bulk-result` (`data-affected`, `data-skipped`).
 */
import { useState } from 'react';
import type { BulkResult } from '../../../engine/api/contract';
import { formatCount } from './format';
import { useList } from './hooks';

/** See the module comment. */
export function BulkBar() {
  const bulk = useList((s) => s.bulk);
  const [preview, setPreview] = useState<BulkResult | undefined>(undefined);
  const [result, setResult] = useState<BulkResult | undefined>(undefined);
  const [compensate, setCompensate] = useState(false);
  const [busy, setBusy] = useState(false);

  const ask = async (action: 'cancel' | 'retry'): Promise<void> => {
    setBusy(true);
    setResult(undefined);
    try {
      setPreview(await bulk(action, { dryRun: true }));
    } finally {
      setBusy(false);
    }
  };
  const confirm = async (): Promise<void> => {
    if (!preview) return;
    setBusy(true);
    try {
      const r = await bulk(preview.action, { dryRun: false, upToId: preview.upToId, compensate });
      setResult(r);
      setPreview(undefined);
    } finally {
      setBusy(false);
    }
  };
  const verb = preview?.action === 'retry' || preview?.action === 'pause' || preview?.action === 'unpause' ? preview.action : compensate ? 'cancel (compensating first)' : 'cancel';
  return (
    <div className="bulk-bar">
      <span className="muted">Bulk, over this filter:</span>
      <button
        type="button"
        data-testid="bulk-retry"
        disabled={busy}
        onClick={() => void ask('retry')}
        title="Retry every FAILED instance matching the filter from its failed node"
      >
        Retry failed…
      </button>
      <button
        type="button"
        data-testid="bulk-cancel"
        disabled={busy}
        onClick={() => void ask('cancel')}
        title="Cancel every live instance matching the filter"
      >
        Cancel live…
      </button>
      {preview ? (
        <div
          className="bulk-preview"
          role="alertdialog"
          aria-label="Confirm bulk action"
          data-testid="bulk-preview"
          data-count={preview.matched}
          data-action={preview.action}
        >
          <span>
            This will <strong>{verb}</strong> <strong>{formatCount(preview.matched)}</strong> instance
            {preview.matched === 1 ? '' : 's'}
            {preview.sample.length > 0 ? (
              <span className="muted">
                {' '}
                (#{preview.sample.slice(0, 8).join(', #')}
                {preview.matched > 8 ? ', …' : ''})
              </span>
            ) : null}
            .
          </span>
          {preview.action === 'cancel' ? (
            <label className="inline-field">
              <input
                type="checkbox"
                data-testid="bulk-compensate"
                checked={compensate}
                onChange={(e) => setCompensate(e.target.checked)}
              />
              compensate first
            </label>
          ) : null}
          <button
            type="button"
            className="danger"
            data-testid="bulk-confirm"
            disabled={busy || preview.matched === 0}
            onClick={() => void confirm()}
          >
            {preview.action === 'retry' ? 'Retry' : 'Cancel'} {formatCount(preview.matched)}
          </button>
          <button
            type="button"
            data-testid="bulk-dismiss"
            disabled={busy}
            onClick={() => setPreview(undefined)}
          >
            Never mind
          </button>
        </div>
      ) : null}
      {result ? (
        <span
          className="bulk-result"
          data-testid="bulk-result"
          data-affected={result.affected}
          data-skipped={result.skipped}
          role="status"
        >
          {result.action === 'retry' ? 'Retried' : 'Cancelled'} {formatCount(result.affected)}
          {result.skipped > 0
            ? `; ${formatCount(result.skipped)} skipped (changed meanwhile: ${result.errors
                .slice(0, 3)
                .map((e) => `#${e.id} ${e.code}`)
                .join(', ')})`
            : ''}
          .
          <button type="button" className="link" onClick={() => setResult(undefined)} aria-label="Dismiss">
            ×
          </button>
        </span>
      ) : null}
    </div>
  );
}
