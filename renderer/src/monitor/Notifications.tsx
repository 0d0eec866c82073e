/**
 * Notices that need a person (an instance SUSPENDED, an approval requested): a row of their own
 * above the status bar, below the error toasts' (neither covers the view). Clicking one opens its
 * instance (a summary opens the SUSPENDED list); each leaves after 10 s or by its ×.
 *
 * Test ids: `notices`, `notice-<id>` (`data-kind`, `data-instance`), `notice-open-<id>`,
 * `notice-dismiss-<id>`.
 */
import './monitor.css';
import { useEffect } from 'react';
import type { Notice } from '../stores/notices-store';
import { useNotices } from './hooks';

const NOTICE_MS = 10_000;

function NoticeItem({ notice }: { notice: Notice }) {
  const dismiss = useNotices((s) => s.dismiss);
  const activate = useNotices((s) => s.activate);
  useEffect(() => {
    const t = setTimeout(() => dismiss(notice.id), NOTICE_MS);
    return () => clearTimeout(t);
  }, [dismiss, notice.id]);
  return (
    <div
      className={`notice notice-${notice.kind}`}
      role="status"
      data-testid={`notice-${notice.id}`}
      data-kind={notice.kind}
      data-instance={notice.instanceId ?? ''}
    >
      <button
        type="button"
        className="notice-body"
        data-testid={`notice-open-${notice.id}`}
        onClick={() => activate(notice.id)}
      >
        <span className="notice-icon" aria-hidden="true">
          {notice.kind === 'approval' ? '?' : '‖'}
        </span>
        <span>
          <strong>{notice.title}</strong>
          <span className="notice-text">{notice.body}</span>
        </span>
      </button>
      <button
        type="button"
        className="toast-close"
        aria-label="Dismiss"
        data-testid={`notice-dismiss-${notice.id}`}
        onClick={() => dismiss(notice.id)}
      >
        ×
      </button>
    </div>
  );
}

/** See the module comment. */
export function Notifications() {
  const notices = useNotices((s) => s.notices);
  return (
    <div className="notices" aria-live="polite" data-testid="notices">
      {notices.map((n) => (
        <NoticeItem key={n.id} notice={n} />
      ))}
    </div>
  );
}
