/**
 * Windowing arithmetic of the virtualized table: which rows to render for a scroll position.
 * Pure, so it is unit-tested apart from the DOM.
 */

/** The rows to render: `[start, end)` and the offset of `start` in px. */
export interface RowWindow {
  start: number;
  end: number;
  offsetTop: number;
}

/**
 * Rows visible in a viewport of `viewportHeight` px scrolled to `scrollTop`, plus `overscan` rows
 * on each side, for `rowCount` rows of `rowHeight` px. Clamped to the rows that exist.
 */
export function rowWindow(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  rowCount: number,
  overscan = 8,
): RowWindow {
  if (rowCount <= 0 || rowHeight <= 0) return { start: 0, end: 0, offsetTop: 0 };
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const visible = Math.ceil(Math.max(0, viewportHeight) / rowHeight) + 1;
  const start = Math.max(0, Math.min(rowCount - 1, first - overscan));
  const end = Math.min(rowCount, first + visible + overscan);
  return { start, end: Math.max(start, end), offsetTop: start * rowHeight };
}

/** Whether the viewport is within `thresholdRows` rows of the end (time to load the next page). */
export function nearEnd(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  rowCount: number,
  thresholdRows = 20,
): boolean {
  return scrollTop + viewportHeight >= (rowCount - thresholdRows) * rowHeight;
}
