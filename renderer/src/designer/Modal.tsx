/**
 * A small modal dialog: a titled panel over a dim backdrop; Escape or the backdrop cancels.
 */
import { useEffect, type ReactNode } from 'react';

/** A modal dialog with test id `testId`. */
export function Modal({ title, testId, onClose, children, wide }: { title: string; testId: string; onClose(): void; children: ReactNode; wide?: boolean }) {
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent): void => {
      if (e.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  return (
    <div className="rn-modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className={`rn-modal${wide ? ' wide' : ''}`} role="dialog" aria-modal="true" aria-label={title} data-testid={testId}>
        <h2>{title}</h2>
        {children}
      </div>
    </div>
  );
}
