import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EventBatchSchema, type ContractEvent, type EventBatch } from '../../../engine/api/contract';
import { EventBatcher, batchEngineEvents } from '../../../engine/api/event-batcher';
import type { EngineEvent, EngineListener } from '../../../engine/api';

/** Replays batches in order into the last status per instance and per (instance, node). */
function replay(batches: readonly EventBatch[]) {
  const instances = new Map<number, string>();
  const nodes = new Map<string, string>();
  const finished: ContractEvent[] = [];
  const approvals: ContractEvent[] = [];
  const created: number[] = [];
  for (const b of batches) {
    for (const e of b.events) {
      if (e.type === 'instance.created') created.push(e.instanceId);
      if (e.type === 'instance.changed' || e.type === 'instance.finished')
        instances.set(e.instanceId, e.status);
      if (e.type === 'instance.finished') finished.push(e);
      if (e.type === 'approval.requested') approvals.push(e);
      if (e.type === 'node.changed') nodes.set(`${e.instanceId}/${e.nodeId}`, e.status);
    }
  }
  return { instances, nodes, finished, approvals, created };
}

describe('EventBatcher', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: Date.UTC(2026, 0, 1) });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('given 10,000 events in one second, hands out about one batch per 100 ms, ending in the latest statuses and dropping no finish or approval', () => {
    const batches: EventBatch[] = [];
    const batcher = new EventBatcher({ onBatch: (b) => batches.push(b), intervalMs: 100 });
    const expectedInstances = new Map<number, string>();
    const expectedNodes = new Map<string, string>();
    const nodeStatuses = ['READY', 'RUNNING', 'RETRYING', 'RUNNING', 'COMPLETED'];
    let pushed = 0;
    let finishes = 0;
    let approvals = 0;

    // when: 100 instances, 10 events every millisecond for 1,000 ms
    for (let ms = 0; ms < 1000; ms++) {
      for (let k = 0; k < 10; k++) {
        const n = ms * 10 + k;
        const instanceId = (n % 100) + 1;
        const round = Math.floor(n / 100);
        let event: EngineEvent;
        if (round === 0) event = { type: 'instance.created', instanceId, workflow: 'w', version: 1 };
        else if (round === 99) {
          // The last round: every instance finishes (odd ones after an approval).
          event = {
            type: 'instance.finished',
            instanceId,
            status: instanceId % 2 === 0 ? 'COMPLETED' : 'FAILED',
          };
          finishes++;
        } else if (round === 50 && instanceId % 2 === 1) {
          event = { type: 'approval.requested', instanceId, nodeId: 'approve', prompt: `ok ${instanceId}?` };
          approvals++;
        } else if (round % 3 === 0) {
          event = { type: 'instance.changed', instanceId, status: round % 2 === 0 ? 'RUNNING' : 'WAITING' };
        } else {
          event = {
            type: 'node.changed',
            instanceId,
            nodeId: `n${round % 4}`,
            status: nodeStatuses[round % 5] ?? 'RUNNING',
            attempt: round,
          };
        }
        if (event.type === 'instance.changed' || event.type === 'instance.finished')
          expectedInstances.set(instanceId, event.status);
        if (event.type === 'node.changed') expectedNodes.set(`${instanceId}/${event.nodeId}`, event.status);
        batcher.push(event);
        pushed++;
      }
      vi.advanceTimersByTime(1);
    }
    vi.advanceTimersByTime(200);

    // then: a bounded number of batches, each valid, with increasing seq
    expect(pushed).toBe(10_000);
    expect(batches.length).toBeGreaterThanOrEqual(9);
    expect(batches.length).toBeLessThanOrEqual(12);
    batches.forEach((b, i) => {
      expect(EventBatchSchema.parse(b)).toEqual(b);
      expect(b.seq).toBe(i + 1);
    });
    const total = batches.reduce((n, b) => n + b.events.length, 0);
    const coalesced = batches.reduce((n, b) => n + b.coalesced, 0);
    expect(total + coalesced).toBe(10_000);
    // at most one event per instance and per (instance, node) in a batch, plus the never-merged ones
    for (const b of batches) expect(b.events.length).toBeLessThanOrEqual(100 * 5 + 250);
    expect(total).toBeLessThan(6000);

    // and replaying them gives the latest statuses, every creation, finish and approval
    const seen = replay(batches);
    expect(seen.instances).toEqual(expectedInstances);
    expect(seen.nodes).toEqual(expectedNodes);
    expect(seen.created).toHaveLength(100);
    expect(seen.finished).toHaveLength(finishes);
    expect(seen.approvals).toHaveLength(approvals);
    expect(seen.approvals[0]).toEqual({
      type: 'approval.requested',
      instanceId: 1,
      nodeId: 'approve',
      prompt: 'ok 1?',
    });
    expect(batcher.pendingCount).toBe(0);
  });

  it('a change after a finish (a retry) lands after it, so replay ends in the latest status', () => {
    const batches: EventBatch[] = [];
    const batcher = new EventBatcher({ onBatch: (b) => batches.push(b) });
    batcher.push({ type: 'instance.changed', instanceId: 7, status: 'RUNNING' });
    batcher.push({ type: 'instance.finished', instanceId: 7, status: 'FAILED' });
    batcher.push({ type: 'instance.changed', instanceId: 7, status: 'RUNNING' });
    vi.advanceTimersByTime(100);
    expect(batches).toHaveLength(1);
    expect(batches[0]?.events).toEqual([
      { type: 'instance.finished', instanceId: 7, status: 'FAILED' },
      { type: 'instance.changed', instanceId: 7, status: 'RUNNING' },
    ]);
    expect(batches[0]?.coalesced).toBe(1);
    expect(replay(batches).instances.get(7)).toBe('RUNNING');
  });

  it('sends the first event after a quiet spell at once, then at most one batch per interval', () => {
    const at: number[] = [];
    const batcher = new EventBatcher({ onBatch: () => at.push(Date.now()), intervalMs: 100 });
    const t0 = Date.now();
    // events pushed in the same turn still share a batch
    batcher.push({ type: 'instance.changed', instanceId: 1, status: 'RUNNING' });
    batcher.push({ type: 'node.changed', instanceId: 1, nodeId: 'a', status: 'RUNNING' });
    expect(at).toHaveLength(0);
    vi.advanceTimersByTime(0);
    expect(at).toEqual([t0]);
    vi.advanceTimersByTime(30);
    batcher.push({ type: 'instance.changed', instanceId: 1, status: 'WAITING' });
    vi.advanceTimersByTime(69);
    expect(at).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(at).toEqual([t0, t0 + 100]);
    // after a long quiet spell: at once again
    vi.advanceTimersByTime(5000);
    batcher.push({ type: 'instance.changed', instanceId: 1, status: 'COMPLETED' });
    vi.advanceTimersByTime(0);
    expect(at).toEqual([t0, t0 + 100, t0 + 5100]);
  });

  it('does not forward engine-internal events, and close() flushes then ignores', () => {
    const batches: EventBatch[] = [];
    const batcher = new EventBatcher({ onBatch: (b) => batches.push(b) });
    batcher.push({ type: 'clock.jumped', fromMs: 1, toMs: 2 });
    expect(batcher.pendingCount).toBe(0);
    batcher.push({ type: 'node.changed', instanceId: 1, nodeId: 'a', status: 'RUNNING' });
    batcher.close();
    expect(batches).toHaveLength(1);
    batcher.push({ type: 'node.changed', instanceId: 1, nodeId: 'a', status: 'COMPLETED' });
    vi.advanceTimersByTime(1000);
    expect(batches).toHaveLength(1);
  });

  it('a throwing listener does not stop batching', () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    let calls = 0;
    const batcher = new EventBatcher({
      onBatch: () => {
        calls++;
        throw new Error('boom');
      },
    });
    batcher.push({ type: 'instance.changed', instanceId: 1, status: 'RUNNING' });
    vi.advanceTimersByTime(100);
    batcher.push({ type: 'instance.changed', instanceId: 1, status: 'COMPLETED' });
    vi.advanceTimersByTime(100);
    expect(calls).toBe(2);
    expect(error).toHaveBeenCalled();
    error.mockRestore();
  });

  it('batchEngineEvents subscribes to an engine and its stopper unsubscribes and flushes', () => {
    let listener: EngineListener | undefined;
    const engine = {
      on(l: EngineListener) {
        listener = l;
        return () => (listener = undefined);
      },
    };
    const batches: EventBatch[] = [];
    const stop = batchEngineEvents(engine, (b) => batches.push(b), 50);
    listener?.({ type: 'instance.created', instanceId: 1, workflow: 'w', version: 2 });
    stop();
    expect(listener).toBeUndefined();
    expect(batches).toEqual([
      {
        seq: 1,
        events: [{ type: 'instance.created', instanceId: 1, workflow: 'w', version: 2 }],
        coalesced: 0,
      },
    ]);
  });
});
