/**
 * Sorting the instance table by a column. `instance:list` orders by id only (newest first, or
 * oldest first when paged with `afterId`), so the id and the start time (ids are given in start
 * order) sort on the engine over every matching instance; every other column sorts the rows
 * loaded so far, in the renderer, and the table says so. Pure.
 */
import type { InstanceListItem } from '../../../engine/api/contract';

/** The table's sortable columns, in column order. */
export const SORT_COLUMNS = [
  'id',
  'workflow',
  'status',
  'started',
  'duration',
  'current',
  'attempt',
  'nextRetry',
  'waiting',
  'reason',
] as const;

/** A sortable column. */
export type SortColumn = (typeof SORT_COLUMNS)[number];

/** A sort order, spelled as `aria-sort` spells it. */
export type SortDirection = 'ascending' | 'descending';

/** The table's sort. */
export interface ListSort {
  column: SortColumn;
  direction: SortDirection;
}

/** The engine's own order: newest first. */
export const DEFAULT_SORT: ListSort = { column: 'id', direction: 'descending' };

/** Whether the engine orders by `column` (id order), so paging follows the sort. */
export function sortedByEngine(column: SortColumn): boolean {
  return column === 'id' || column === 'started';
}

/**
 * The sort after a click on `column`'s header: the other direction of the same column, else the
 * column's first direction (newest / largest first for times, ids, durations and attempts; A→Z
 * for text).
 */
export function nextSort(current: ListSort, column: SortColumn): ListSort {
  if (current.column === column)
    return { column, direction: current.direction === 'ascending' ? 'descending' : 'ascending' };
  const textual = column === 'workflow' || column === 'status' || column === 'current' || column === 'waiting' || column === 'reason';
  return { column, direction: textual ? 'ascending' : 'descending' };
}

type Key = string | number | null;

/** The value a row is sorted by in `column` (null: nothing to sort by, always last). */
function keyOf(row: InstanceListItem, column: SortColumn, now: number): Key {
  switch (column) {
    case 'id':
    case 'started':
      return row.id;
    case 'workflow':
      return `${row.workflow}\u0000${String(row.workflowVersion).padStart(10, '0')}`;
    case 'status':
      return row.status;
    case 'duration':
      return (row.endedAt ?? now) - (row.startedAt ?? row.createdAt);
    case 'current':
      return row.currentNodes.length > 0 ? row.currentNodes.join(', ') : null;
    case 'attempt':
      return row.attempt !== null && row.attempt > 0 ? row.attempt : null;
    case 'nextRetry':
      return row.nextRetryAt;
    case 'waiting':
      return row.waitingFor;
    case 'reason':
      return row.reason ?? null;
  }
}

function compareKeys(a: Key, b: Key): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true, sensitivity: 'base' });
}

/**
 * `rows` sorted by `sort` (a new array; stable, ties keep the given order, which is the engine's;
 * rows with nothing in the column last in either direction). Durations of live rows are taken at
 * `now`.
 */
export function sortRows(rows: readonly InstanceListItem[], sort: ListSort, now: number): InstanceListItem[] {
  const sign = sort.direction === 'ascending' ? 1 : -1;
  const keyed = rows.map((row, i) => ({ row, i, key: keyOf(row, sort.column, now) }));
  keyed.sort((a, b) => {
    if (a.key === null || b.key === null) return a.key === b.key ? a.i - b.i : a.key === null ? 1 : -1;
    return sign * compareKeys(a.key, b.key) || a.i - b.i;
  });
  return keyed.map((k) => k.row);
}
