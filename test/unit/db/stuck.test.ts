// engine/db/queries/stuck.ts: the monitor list's "why is it stuck" columns, computed from the row
// the list's SQL gathered (current node, attempt n of m, what it waits for, since when, why).
import { describe, expect, it } from 'vitest';
import { describeStuck } from '../../../engine/db/queries/stuck';

describe('"why is it stuck" columns (engine, computed from the row SQL gathered)', () => {
  const tuple = (
    id: string,
    status: string,
    attempt: number,
    limit: number,
    wait: unknown,
    startedAt: number | null,
  ) => [id, status, attempt, limit, wait, startedAt];
  it('a retrying node: attempt n of m and the next retry; waiting for a retry', () => {
    const s = describeStuck({
      status: 'WAITING',
      nodes_json: JSON.stringify([tuple('b', 'RETRYING', 2, 5, { kind: 'retry', until: 9000 }, 100)]),
      suspension_json: null,
      error_json: null,
    });
    expect(s).toEqual({
      currentNodes: ['b'],
      attempt: 2,
      maxAttempts: 5,
      nextRetryAt: 9000,
      waitingFor: 'retry',
      waitingSince: null,
      waitingUntil: 9000,
      reason: null,
    });
  });
  it('an approval outranks a timer; running nodes come before waiting ones', () => {
    const s = describeStuck({
      status: 'RUNNING',
      nodes_json: JSON.stringify([
        tuple('t', 'WAITING', 1, 1, { kind: 'timer', until: 500 }, 10),
        tuple('ask', 'WAITING', 1, 1, { kind: 'approval', timeoutAt: 800 }, 20),
        tuple('r', 'RUNNING', 1, 3, null, 30),
      ]),
      suspension_json: null,
      error_json: null,
    });
    expect(s).toMatchObject({
      currentNodes: ['r', 'ask', 't'],
      attempt: 1,
      maxAttempts: 3,
      waitingFor: 'approval',
      waitingSince: 20,
      waitingUntil: 800,
    });
  });
  it('a suspension: waiting for a person, since when, and why', () => {
    const s = describeStuck({
      status: 'SUSPENDED',
      nodes_json: JSON.stringify([tuple('charge', 'COMPENSATING', 1, 1, { kind: 'compensation' }, null)]),
      suspension_json: JSON.stringify({
        kind: 'compensation',
        nodeId: 'charge',
        error: { code: 'HANDLER_ERROR', message: 'refund refused' },
        attempts: 2,
        at: 777,
      }),
      error_json: null,
    });
    expect(s).toMatchObject({
      currentNodes: ['charge'],
      waitingFor: 'person',
      waitingSince: 777,
      reason: 'compensation of "charge" failed after 2 attempts: HANDLER_ERROR: refund refused',
    });
  });
  it('a failed instance names its failed node and error; a completed one nothing', () => {
    expect(
      describeStuck({
        status: 'FAILED',
        nodes_json: JSON.stringify([tuple('b', 'FAILED', 3, 3, null, 5)]),
        suspension_json: null,
        error_json: '{"code":"HTTP_ERROR","message":"503"}',
      }),
    ).toMatchObject({
      currentNodes: ['b'],
      attempt: 3,
      maxAttempts: 3,
      reason: 'HTTP_ERROR: 503',
      waitingFor: null,
    });
    expect(
      describeStuck({ status: 'COMPLETED', nodes_json: null, suspension_json: null, error_json: null }),
    ).toMatchObject({ currentNodes: [], attempt: null, reason: null });
    // a node that failed but was handled by an error edge is not "current" in a running instance
    expect(
      describeStuck({
        status: 'RUNNING',
        nodes_json: JSON.stringify([
          tuple('b', 'FAILED', 1, 1, null, 5),
          tuple('c', 'RUNNING', 1, 1, null, 6),
        ]),
        suspension_json: null,
        error_json: null,
      }).currentNodes,
    ).toEqual(['c']);
  });
});
