/**
 * Error toasts: one per failed call, showing its code and message (`data-testid="toast"`, with
 * `toast-code` and `toast-message` inside). Each closes by its button or after 10 s.
 *
 * They sit in a row of their own above the status bar (styles.css `.app`), taking room from the
 * view rather than covering its rows, panels or Problems list. A failure the caller shows where
 * it happened is taken back before it is painted (`claimToast`): one place per error.
 */
import { useEffect } from 'react';
import { useUi } from '../hooks';
import type { Toast } from '../stores/ui-store';

/** How long a toast stays, ms. */
const TOAST_MS = 10_000;

function ToastItem({ toast, onClose }: { toast: Toast; onClose: () => void }) {
  useEffect(() => {
    const timer = setTimeout(onClose, TOAST_MS);
    return () => clearTimeout(timer);
  }, [onClose]);
  return (
    <div className="toast" role="alert" data-testid="toast" data-code={toast.code}>
      <div className="toast-body">
        <code className="toast-code" data-testid="toast-code">
          {toast.code}
        </code>
        <span className="toast-message" data-testid="toast-message">
          {toast.message}
        </span>
      </div>
      <button type="button" className="toast-close" aria-label="Dismiss" data-testid="toast-dismiss" onClick={onClose}>
        ×
      </button>
    </div>
  );
}

/** The toast row (above the status bar, right-aligned). */
export function Toasts() {
  const toasts = useUi((s) => s.toasts);
  const dismiss = useUi((s) => s.dismissToast);
  return (
    <div className="toasts" aria-live="assertive" data-testid="toasts">
      {toasts.map((t) => (
        <ToastItem key={t.id} toast={t} onClose={() => dismiss(t.id)} />
      ))}
    </div>
  );
}
