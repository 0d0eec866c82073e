// renderer/src/monitor/timeline.ts: the Gantt's bars from an instance's history (attempts,
// backoffs, waits, markers, what runs now), and the axis ticks that fit its width.
import { describe, expect, it } from 'vitest';
import type { HistoryEvent, NodeState } from '../../../../engine/api/contract';
import { formatDuration } from '../../../../renderer/src/monitor/format';
import { axisTicks, buildGantt } from '../../../../renderer/src/monitor/timeline';

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

  it('draws the wait of an event node and of a map node, and marks events received and children failed', () => {
    const history = [
      h(1, 'instance.created', 1000, null, null),
      h(2, 'event.received', 1050, null, null, { eventId: 1, name: 'early', key: null, data: {}, consumedBy: null }, 'ada'),
      h(3, 'event.waiting', 1100, 'pay', 1, { name: 'payment', key: 'A-1' }),
      h(4, 'event.received', 1400, 'pay', null, { eventId: 2, name: 'payment', key: 'A-1', data: { amount: 3 }, consumedBy: 'pay' }),
      h(5, 'node.completed', 1410, 'pay', 1, {}),
      h(6, 'children.started', 1500, 'each', 1, { workflow: 'device-upgrade', version: 2, items: 3, maxConcurrency: 2 }),
      h(7, 'child.failed', 1700, 'each', 1, { childId: 9, index: 1, status: 'FAILED' }),
    ];
    const g = buildGantt(history, [node('pay', 'COMPLETED'), node('each', 'WAITING')], 1000, null, 2000);
    expect(g.bars.filter((b) => b.kind === 'waiting').map((b) => [b.nodeId, b.start, b.end, b.open, b.label])).toEqual([
      ['pay', 1100, 1410, false, 'pay: waiting for event “payment”'],
      ['each', 1500, 2000, true, 'each: waiting for 3 child instances of device-upgrade'],
    ]);
    expect(g.markers.filter((m) => m.type !== 'instance.created').map((m) => [m.nodeId, m.label])).toEqual([
      [null, 'event “early” kept from ada'],
      ['pay', 'event “payment” (key A-1) received'],
      ['each', 'a child failed'],
    ]);
  });
});

describe('pause markers', () => {
  it('marks a pause and an unpause on the instance row, the unpause with how long it was paused', () => {
    // given: an instance paused for 2.5 s by ada between its two steps
    const history = [
      h(1, 'instance.created', 1000, null, null),
      h(2, 'node.completed', 1100, 'a', 1, { durationMs: 80 }),
      h(3, 'instance.paused', 1200, null, null, undefined, 'ada'),
      h(4, 'instance.unpaused', 3700, null, null, { pausedMs: 2500 }, 'ada'),
    ];
    // when
    const g = buildGantt(history, [node('a', 'COMPLETED')], 1000, null, 4000);
    // then
    expect(g.markers.filter((m) => m.type.startsWith('instance.') && m.type !== 'instance.created').map((m) => [m.nodeId, m.label])).toEqual([
      [null, 'paused by ada'],
      [null, `unpaused after ${formatDuration(2500)} paused by ada`],
    ]);
  });
});

describe('axisTicks', () => {
  const label = (ms: number): string => `+${formatDuration(ms)}`;
  it('ticks at round steps, fewer on a narrower axis, each a label and a gap apart', () => {
    const wide = axisTicks(1700, 1000, label);
    const narrow = axisTicks(1700, 250, label);
    expect(wide.slice(0, 3)).toEqual([0, 200, 400]);
    expect(narrow.length).toBeLessThan(wide.length);
    expect(narrow[0]).toBe(0);
    for (const ticks of [wide, narrow]) {
      const step = (ticks[1] ?? 0) - (ticks[0] ?? 0);
      const widest = Math.max(...ticks.map((t) => label(t).length));
      expect((step / 1700) * (ticks === wide ? 1000 : 250)).toBeGreaterThanOrEqual(widest * 7 + 14);
      expect(ticks[ticks.length - 1]).toBeLessThanOrEqual(1700);
    }
  });
  it('has only the start for an empty span or no width', () => {
    expect(axisTicks(0, 500, label)).toEqual([0]);
    expect(axisTicks(1000, 0, label)).toEqual([0]);
  });
});
