/**
 * Bulk actions over the current filter, behind one "Bulk actions" button in the status chips'
 * line (so they take no line of their own above the table): retry the FAILED instances, cancel the live ones (with
 * or without compensation), pause the live ones not paused yet, or unpause the paused ones. A click first counts what the action would touch (a dry run) and
 * shows the number and the first ids; only a confirmation runs it, on that same set (instances
 * started since the count are left alone). The result says how many changed and which were
 * skipped (changed meanwhile).
 *
 * The button discloses a panel under it (over the table's first rows while open; Escape or a click
 * outside closes it) holding the four actions, then the preview and the result. A pending preview
 * or an unread result keeps it open.
 *
 * Test ids: `bulk-menu` (the disclosing button, `aria-expanded`), `bulk-panel`, `bulk-retry`, `bulk-cancel`, `bulk-pause`, `bulk-unpause`, `bulk-preview` (`data-count`, `data-action`),
 * `bulk-compensate`, `bulk-confirm`, `bulk-dismiss`, `bulk-result` (`data-affected`, `data-skipped`).
 */
import { useEffect, useRef, useState } from 'react';
import type { BulkResult } from '../../../engine/api/contract';
import { formatCount } from './format';
import { useList } from './hooks';

type BulkAction = BulkResult['action'];

/** Per action: its button's label and title, the confirm button's and the result's words (in the panel's order). */
const WORDS: Record<BulkAction, { label: string; title: string; confirm: string; done: string }> = {
  retry: {
    label: 'Retry failed…',
    title: 'Retry every FAILED instance matching the filter from its failed node',
    confirm: 'Retry',
    done: 'Retried',
  },
  cancel: {
    label: 'Cancel live…',
    title: 'Cancel every live instance matching the filter',
    confirm: 'Cancel',
    done: 'Cancelled',
  },
  pause: {
    label: 'Pause live…',
    title: 'Pause every live instance matching the filter that is not paused yet',
    confirm: 'Pause',
    done: 'Paused',
  },
  unpause: {
    label: 'Unpause…',
    title: 'Unpause every paused instance matching the filter',
    confirm: 'Unpause',
    done: 'Unpaused',
  },
};

/** See the module comment. */
export function BulkBar() {
  const bulk = useList((s) => s.bulk);
  const [preview, setPreview] = useState<BulkResult | undefined>(undefined);
  const [result, setResult] = useState<BulkResult | undefined>(undefined);
  const [compensate, setCompensate] = useState(false);
  const [busy, setBusy] = useState(false);
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const close = (): void => {
    setOpen(false);
    setPreview(undefined);
    setResult(undefined);
  };
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent): void => {
      if (e.key === 'Escape') close();
    };
    const onDown = (e: MouseEvent): void => {
      if (root.current && e.target instanceof Node && !root.current.contains(e.target)) close();
    };
    window.addEventListener('keydown', onKey);
    window.addEventListener('mousedown', onDown);
    return () => {
      window.removeEventListener('keydown', onKey);
      window.removeEventListener('mousedown', onDown);
    };
  }, [open]);

  const ask = async (action: BulkAction): Promise<void> => {
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
  const verb =
    preview?.action === 'cancel' ? (compensate ? 'cancel (compensating first)' : 'cancel') : preview?.action;
  return (
    <div className="bulk-bar" ref={root}>
      <button
        type="button"
        className="bulk-menu"
        data-testid="bulk-menu"
        aria-expanded={open}
        aria-controls="bulk-panel"
        onClick={() => (open ? close() : setOpen(true))}
        title="Retry, cancel, pause or unpause every instance matching the filter"
      >
        Bulk actions <span aria-hidden="true">▾</span>
      </button>
      {open ? (
        <div
          className="bulk-panel"
          id="bulk-panel"
          data-testid="bulk-panel"
          role="group"
          aria-label="Bulk, over this filter"
        >
          <span className="muted">Over this filter:</span>
          {(Object.keys(WORDS) as BulkAction[]).map((action) => (
            <button
              key={action}
              type="button"
              data-testid={`bulk-${action}`}
              disabled={busy}
              onClick={() => void ask(action)}
              title={WORDS[action].title}
            >
              {WORDS[action].label}
            </button>
          ))}
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
                className={preview.action === 'pause' || preview.action === 'unpause' ? 'primary' : 'danger'}
                data-testid="bulk-confirm"
                disabled={busy || preview.matched === 0}
                onClick={() => void confirm()}
              >
                {WORDS[preview.action].confirm} {formatCount(preview.matched)}
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
              {WORDS[result.action].done} {formatCount(result.affected)}
              {result.skipped > 0
                ? `; ${formatCount(result.skipped)} skipped (changed meanwhile: ${result.errors
                    .slice(0, 3)
                    .map((e) => `#${e.id} ${e.code}`)
                    .join(', ')})`
                : ''}
              .
              <button
                type="button"
                className="link"
                onClick={() => setResult(undefined)}
                aria-label="Dismiss"
              >
                ×
              </button>
            </span>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
