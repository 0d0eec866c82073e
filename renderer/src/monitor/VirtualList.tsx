/**
 * A windowed list: only the rows in view (plus a few) are in the DOM, whatever the row count, so
 * 100,000 loaded rows scroll as smoothly as 50. Fixed row height; the viewport's height is
 * measured (ResizeObserver). Calls `onNearEnd` when the viewport nears the last row, for the next
 * server-side page.
 */
import { useEffect, useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import { nearEnd, rowWindow } from './virtual';

/** Props of {@link VirtualList}. */
export interface VirtualListProps {
  rowCount: number;
  rowHeight: number;
  renderRow: (index: number) => ReactNode;
  /** Called (at most once per row count) when the viewport is within 20 rows of the end. */
  onNearEnd?: () => void;
  /** Initial scroll position (restored when the list comes back). */
  initialScrollTop?: number;
  onScroll?: (scrollTop: number) => void;
  className?: string;
  testId?: string;
}

/** See the module comment. */
export function VirtualList({
  rowCount,
  rowHeight,
  renderRow,
  onNearEnd,
  initialScrollTop = 0,
  onScroll,
  className,
  testId,
}: VirtualListProps) {
  const ref = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(initialScrollTop);
  const [height, setHeight] = useState(600);
  const askedAt = useRef(-1);

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (initialScrollTop > 0) el.scrollTop = initialScrollTop;
    setHeight(el.clientHeight || 600);
    if (typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() => setHeight(el.clientHeight || 600));
    ro.observe(el);
    return () => ro.disconnect();
    // The initial position is read once, on mount.
  }, []);

  useEffect(() => {
    if (!onNearEnd || rowCount === 0 || askedAt.current === rowCount) return;
    if (nearEnd(scrollTop, height, rowHeight, rowCount)) {
      askedAt.current = rowCount;
      onNearEnd();
    }
  }, [scrollTop, height, rowHeight, rowCount, onNearEnd]);

  const win = rowWindow(scrollTop, height, rowHeight, rowCount);
  const rows: ReactNode[] = [];
  for (let i = win.start; i < win.end; i++) rows.push(renderRow(i));
  return (
    <div
      ref={ref}
      className={`virtual-list ${className ?? ''}`}
      data-testid={testId}
      data-rows={rowCount}
      data-rendered={win.end - win.start}
      onScroll={(e) => {
        const top = e.currentTarget.scrollTop;
        setScrollTop(top);
        onScroll?.(top);
      }}
    >
      <div className="virtual-spacer" style={{ height: rowCount * rowHeight }}>
        <div className="virtual-window" style={{ transform: `translateY(${win.offsetTop}px)` }}>
          {rows}
        </div>
      </div>
    </div>
  );
}
