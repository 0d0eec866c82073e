// Sorting the instance table (renderer/src/monitor/sort.ts): which columns the engine orders, the
// direction a header click picks, and the order of the loaded rows.
import { describe, expect, it } from 'vitest';
import type { InstanceListItem } from '../../../../engine/api/contract';
import { DEFAULT_SORT, nextSort, sortedByEngine, sortRows } from '../../../../renderer/src/monitor/sort';

const row = (id: number, extra: Partial<InstanceListItem> = {}): InstanceListItem => ({
  id,
  workflow: 'w',
  workflowVersion: 1,
  status: 'RUNNING',
  businessKey: null,
  createdAt: 1000 + id,
  startedAt: 1000 + id,
  endedAt: null,
  version: 1,
  currentNodes: [],
  attempt: null,
  maxAttempts: null,
  nextRetryAt: null,
  waitingFor: null,
  waitingSince: null,
  waitingUntil: null,
  reason: null,
  ...extra,
});

describe('instance table sort', () => {
  it('orders by id and start time on the engine, every other column in the renderer', () => {
    expect(sortedByEngine('id')).toBe(true);
    expect(sortedByEngine('started')).toBe(true);
    expect(sortedByEngine('status')).toBe(false);
    expect(sortedByEngine('duration')).toBe(false);
  });

  it('a click flips the same column, and starts a new one A→Z for text and largest first for numbers', () => {
    expect(nextSort(DEFAULT_SORT, 'id')).toEqual({ column: 'id', direction: 'ascending' });
    expect(nextSort(DEFAULT_SORT, 'workflow')).toEqual({ column: 'workflow', direction: 'ascending' });
    expect(nextSort(DEFAULT_SORT, 'duration')).toEqual({ column: 'duration', direction: 'descending' });
    expect(nextSort({ column: 'workflow', direction: 'ascending' }, 'workflow').direction).toBe('descending');
  });

  it('sorts stably, numbers as numbers, and puts rows with nothing in the column last either way', () => {
    const rows = [
      row(1, { attempt: 2 }),
      row(2),
      row(3, { attempt: 10 }),
      row(4, { attempt: 2 }),
    ];
    expect(sortRows(rows, { column: 'attempt', direction: 'descending' }, 0).map((r) => r.id)).toEqual([3, 1, 4, 2]);
    expect(sortRows(rows, { column: 'attempt', direction: 'ascending' }, 0).map((r) => r.id)).toEqual([1, 4, 3, 2]);
    const named = [row(1, { workflow: 'b', workflowVersion: 10 }), row(2, { workflow: 'a' }), row(3, { workflow: 'b', workflowVersion: 9 })];
    expect(sortRows(named, { column: 'workflow', direction: 'ascending' }, 0).map((r) => r.id)).toEqual([2, 3, 1]);
    const timed = [row(1, { startedAt: 0, endedAt: 50 }), row(2, { startedAt: 0, endedAt: null })];
    expect(sortRows(timed, { column: 'duration', direction: 'descending' }, 100).map((r) => r.id)).toEqual([2, 1]);
  });
});
