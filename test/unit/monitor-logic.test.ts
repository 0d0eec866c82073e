// The monitor's pure parts: windowing arithmetic, the Gantt's bars, the graph overlay, variable
// diffs, formatting, the list's "why is it stuck" columns (engine side), and the desktop's
// `app:notify` channel.
import { describe, expect, it } from 'vitest';
import type { HistoryEvent, NodeState } from '../../engine/api/contract';
import { describeStuck } from '../../engine/db/queries/stuck';
import { createDesktopHandlers, dispatchDesktop } from '../../electron/main/desktop-handlers';
import { diffVariables, isEmptyDiff, parseJsonObject } from '../../renderer/src/monitor/diff';
import { formatDuration, formatRelative } from '../../renderer/src/monitor/format';
import { buildOverlay } from '../../renderer/src/monitor/overlay';
import { buildGantt } from '../../renderer/src/monitor/timeline';
import { nearEnd, rowWindow } from '../../renderer/src/monitor/virtual';

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

describe('windowing', () => {
  it('renders only the rows in view plus the overscan, whatever the row count', () => {
    expect(rowWindow(0, 340, 34, 100_000, 5)).toEqual({ start: 0, end: 16, offsetTop: 0 });
    const deep = rowWindow(34 * 50_000, 340, 34, 100_000, 5);
    expect(deep).toEqual({ start: 49_995, end: 50_016, offsetTop: 49_995 * 34 });
    expect(deep.end - deep.start).toBeLessThan(30);
    expect(rowWindow(999_999, 340, 34, 10, 5)).toMatchObject({ end: 10 });
    expect(rowWindow(0, 340, 34, 0)).toEqual({ start: 0, end: 0, offsetTop: 0 });
    expect(nearEnd(34 * 170, 340, 34, 200)).toBe(true);
    expect(nearEnd(0, 340, 34, 200)).toBe(false);
  });
});

describe('Gantt bars from history', () => {
  it('draws a bar per attempt (with its duration), the backoff between them, waits, markers and what runs now', () => {
    const history = [
      h(1, 'instance.created', 1000, null, null),
      h(2, 'node.completed', 1100, 'a', 1, { durationMs: 80 }),
      h(3, 'node.failed', 1300, 'b', 1, {
        durationMs: 150,
        willRetry: true,
        nextAttemptAt: 1500,
        error: { message: 'x' },
      }),
      h(4, 'node.completed', 1600, 'b', 2, { durationMs: 90 }),
      h(5, 'approval.requested', 1700, 'ask', 1),
      h(6, 'approval.decided', 2500, 'ask', 1, { approved: true }, 'ada'),
      h(7, 'node.completed', 2500, 'ask', 1),
      h(8, 'instance.resumed', 2600, 'c', null, { action: 'retry' }, 'ops'),
    ];
    const g = buildGantt(history, [node('c', 'RUNNING', 2, { startedAt: 2700 })], 1000, null, 3000);
    const bars = g.bars.map((b) => [b.nodeId, b.attempt, b.kind, b.start, b.end, b.open]);
    expect(bars).toEqual(
      expect.arrayContaining([
        ['a', 1, 'completed', 1020, 1100, false],
        ['b', 1, 'failed', 1150, 1300, false],
        ['b', 1, 'backoff', 1300, 1500, false],
        ['b', 2, 'completed', 1510, 1600, false],
        ['ask', 1, 'waiting', 1700, 2500, false],
        ['c', 2, 'running', 2700, 3000, true],
      ]),
    );
    expect(g.rows).toEqual(['a', 'b', 'ask', 'c']);
    expect(g.markers.map((m) => [m.type, m.nodeId, m.label])).toEqual([
      ['instance.created', null, 'started'],
      ['approval.decided', 'ask', 'approved by ada'],
      ['instance.resumed', null, 'resumed by ops'],
    ]);
    expect(g.from).toBe(1000);
    expect(g.to).toBe(3000);
  });

  it('keeps an open wait open until now, and closes a wait the end of the instance cut', () => {
    const waiting = buildGantt(
      [h(1, 'timer.started', 100, 'nap', 1, { until: 5000 })],
      [node('nap', 'WAITING')],
      0,
      null,
      900,
    );
    expect(waiting.bars).toEqual([
      expect.objectContaining({ nodeId: 'nap', kind: 'waiting', start: 100, end: 900, open: true }),
    ]);
    const ended = buildGantt(
      [h(1, 'timer.started', 100, 'nap', 1, { until: 5000 })],
      [node('nap', 'CANCELLED')],
      0,
      400,
      900,
    );
    expect(ended.bars).toEqual([expect.objectContaining({ kind: 'waiting', end: 400, open: false })]);
  });
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

describe('variables diff and JSON input', () => {
  it('names what was added, removed and changed; an unchanged edit is empty', () => {
    expect(diffVariables({ a: 1, b: { x: 1 }, c: 3 }, { a: 1, b: { x: 2 }, d: 'new' })).toEqual({
      added: { d: 'new' },
      removed: ['c'],
      changed: { b: { from: { x: 1 }, to: { x: 2 } } },
    });
    expect(isEmptyDiff(diffVariables({ a: [1] }, { a: [1] }))).toBe(true);
    expect(parseJsonObject('[1]')).toMatchObject({ ok: false });
    expect(parseJsonObject('{"a": ')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^Not valid JSON/),
    });
    expect(parseJsonObject('{"a": 1}')).toEqual({ ok: true, value: { a: 1 } });
  });

  it('formats durations and relative times', () => {
    expect([
      formatDuration(850),
      formatDuration(4200),
      formatDuration(200_000),
      formatDuration(7_500_000),
      formatDuration(null),
    ]).toEqual(['850 ms', '4.2 s', '3 min 20 s', '2 h 5 min', '—']);
    expect(formatRelative(10_000, 5_000)).toBe('in 5.0 s');
    expect(formatRelative(5_000, 65_000)).toBe('1 min ago');
  });
});

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

describe('desktop app:notify', () => {
  const deps = {
    chooseOpenPath: async () => undefined,
    chooseSavePath: async () => undefined,
    readText: async () => '',
    fileSize: async () => 0,
    writeText: async () => undefined,
    dbPath: () => '',
    version: '0',
    platform: 'linux',
  };
  it('shows an OS notification and answers whether it was clicked; without notifications, not clicked', async () => {
    const shown: unknown[] = [];
    const h1 = createDesktopHandlers({ ...deps, notify: async (n) => (shown.push(n), true) });
    await expect(
      dispatchDesktop(h1, 'app:notify', { title: 'Instance 4 is SUSPENDED', body: 'open it' }),
    ).resolves.toEqual({ ok: true, value: { clicked: true } });
    expect(shown).toEqual([{ title: 'Instance 4 is SUSPENDED', body: 'open it' }]);
    await expect(
      dispatchDesktop(createDesktopHandlers(deps), 'app:notify', { title: 't', body: '' }),
    ).resolves.toEqual({ ok: true, value: { clicked: false } });
    await expect(dispatchDesktop(h1, 'app:notify', { title: '', body: 'x' })).resolves.toMatchObject({
      ok: false,
      error: { code: 'BAD_REQUEST' },
    });
  });
});
