/**
 * A step whose worker died with its lease is run again by another worker once the lease expired:
 * an attempt of an instant type (a delay, one attempt by default) is recovered without being
 * counted, so one crash does not fail the instance, and the timer fires once, recorded in history.
 * Real database file, a manual clock.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../engine/runtime/clock';
import { SqliteEngine } from '../../../engine/runtime/engine';
import { nodeStatus, tickUntil } from '../../helpers/probe-nodes';
import { tempDir } from '../../helpers/temp-engine';

describe('an attempt of an instant type lost with its worker', () => {
  it('is run again without using up the single attempt of a delay (one crash does not fail the instance)', async () => {
    // given a delay (1 attempt by default) whose claim is lost with its worker
    const { dir, cleanup } = tempDir();
    const file = path.join(dir, 'runnel.db');
    const clock = new ManualClock(1_000_000);
    const a = SqliteEngine.open(file, { clock, leaseMs: 1000, pollIntervalMs: 5 });
    try {
      await a.deploy({
        name: 'nap',
        nodes: [
          { id: 'start', type: 'pass' },
          { id: 'nap', type: 'delay', config: { durationMs: 5000 } },
          { id: 'end', type: 'pass' },
        ],
        edges: [
          { from: 'start', to: 'nap' },
          { from: 'nap', to: 'end' },
        ],
      });
      const id = await a.start('nap');
      await tickUntil(a, async () => (await nodeStatus(a, id, 'nap')) === 'RUNNING', 'nap claimed');
      // the worker dies between the claim and its commit: its outcome is never committed
      a.db.close();

      // when another worker takes over after the lease expired
      clock.advance(1500);
      const b = SqliteEngine.open(file, { clock, leaseMs: 1000, pollIntervalMs: 5 });
      try {
        await tickUntil(b, async () => (await nodeStatus(b, id, 'nap')) === 'WAITING', 'nap waiting on the new worker');
        clock.advance(6000);
        await tickUntil(b, async () => (await b.getInstance(id)).status === 'COMPLETED', 'instance completed');

        // then the recovery is recorded, uncounted, and the delay still had its one attempt
        const history = (await b.history(id));
        const recovered = history.filter((h) => h.type === 'node.recovered' && h.nodeId === 'nap');
        expect(recovered).toHaveLength(1);
        expect(recovered[0]?.data).toMatchObject({ reason: 'recovered after a lost lease', counted: false });
        expect((await b.getInstance(id)).nodes.find((n) => n.id === 'nap')).toMatchObject({ status: 'COMPLETED', attempt: 1, maxAttempts: 1 });
        // the timer fired once, at or after its due time, and history says so
        const fired = history.filter((h) => h.type === 'timer.fired' && h.nodeId === 'nap');
        expect(fired).toHaveLength(1);
        const data = fired[0]?.data as { dueAt: number; lateMs: number };
        expect(fired[0]?.at).toBeGreaterThanOrEqual(data.dueAt);
      } finally {
        await b.close();
      }
    } finally {
      cleanup();
    }
  });
});
