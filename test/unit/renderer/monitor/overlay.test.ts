// renderer/src/monitor/overlay.ts: the graph overlay of an instance: each node coloured by its
// state, what ran, and the path taken.
import { describe, expect, it } from 'vitest';
import type { HistoryEvent, NodeState } from '../../../../engine/api/contract';
import { buildOverlay } from '../../../../renderer/src/monitor/overlay';

const h = (
  id: number,
  type: string,
  at: number,
  nodeId: string | null,
  attempt: number | null,
  data?: unknown,
  actor: string | null = null,
): HistoryEvent => ({ id, type, at, nodeId, attempt, actor, ...(data === undefined ? {} : { data }) });
const node = (id: string, status: string, attempt = 1, extra: Partial<NodeState> = {}): NodeState => ({
  id,
  status,
  attempt,
  maxAttempts: 3,
  completedSeq: null,
  startedAt: null,
  endedAt: null,
  nextRunAt: null,
  ...extra,
});

describe('graph overlay', () => {
  const def = {
    nodes: [
      { id: 'a', type: 'pass' },
      { id: 'b', type: 'script' },
      { id: 'c', type: 'pass' },
      { id: 'd', type: 'pass' },
      { id: 'e', type: 'pass' },
    ],
    edges: [
      { from: 'a', to: 'b' },
      { from: 'b', to: 'c', on: 'error' as const },
      { from: 'a', to: 'd', when: 'x = 1' },
      { from: 'b', to: 'e' },
    ],
  };
  it('colours each node by its state, marks what ran, and draws the path taken', () => {
    const o = buildOverlay(
      def,
      [
        node('a', 'COMPLETED'),
        node('b', 'FAILED', 2, { maxAttempts: 2 }),
        node('c', 'COMPLETED'),
        node('d', 'SKIPPED', 0),
        node('e', 'SKIPPED', 0),
      ],
      [h(1, 'edge.not_taken', 5, 'a', null, { edge: 'a->d', reason: 'x is missing' })],
    );
    expect(o.nodes.map((n) => [n.id, n.state, n.ran])).toEqual([
      ['a', 'completed', true],
      ['b', 'failed', true],
      ['c', 'completed', true],
      ['d', 'skipped', false],
      ['e', 'skipped', false],
    ]);
    expect(o.nodes.find((n) => n.id === 'b')?.detail).toBe('attempt 2/2');
    expect(o.edges.map((e) => [e.id, e.taken])).toEqual([
      ['a->b', true],
      ['b-!>c', true],
      ['a->d', false],
      ['b->e', false],
    ]);
    expect(o.edges.find((e) => e.id === 'a->d')?.notTakenReason).toBe('x is missing');
  });

  it('a node without a state is pending; waiting and retrying say what for', () => {
    const o = buildOverlay(def, [
      node('a', 'WAITING', 1, { wait: { kind: 'approval' } }),
      node('b', 'RETRYING', 1),
    ]);
    expect(o.nodes.map((n) => [n.state, n.detail])).toEqual([
      ['waiting', 'waiting for approval'],
      ['retrying', 'attempt 1/3 failed; retrying'],
      ['pending', ''],
      ['pending', ''],
      ['pending', ''],
    ]);
  });
});
