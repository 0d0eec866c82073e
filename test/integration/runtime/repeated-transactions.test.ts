/**
 * A backend may run a write transaction's function more than once (PostgreSQL rolls back and runs
 * it again on a serialization failure, a deadlock or a unique violation raised by a race;
 * engine/store/port.ts `write`). Here a real SQLite file's backend runs every write's function
 * twice — the first run inside a savepoint that is rolled back — and the engine must behave as
 * if each ran once: handler slots taken by a rolled-back run are given back (a leak stalls the
 * worker once the concurrency is used up), each step runs once, and every instance completes.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStorage } from '../../../engine/db/sqlite-storage';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import type { NodeType } from '../../../engine/nodes/types';
import { Engine } from '../../../engine/runtime/engine';
import type { StorageBackend } from '../../../engine/store/port';
import { z } from 'zod';
import { tempDir } from '../../helpers/temp-engine';

class RolledBack extends Error {}

/** `storage` with every write's function run once in a savepoint that is rolled back, then again for real. */
function twiceRun(storage: StorageBackend): StorageBackend & { runs: number } {
  const out = Object.create(storage) as StorageBackend & { runs: number };
  out.runs = 0;
  out.write = (fn) =>
    storage.write((q) => {
      try {
        q.savepoint(() => {
          out.runs++;
          fn(q);
          throw new RolledBack();
        });
      } catch (err) {
        if (!(err instanceof RolledBack)) throw err;
      }
      out.runs++;
      return fn(q);
    });
  return out;
}

describe('write transactions run more than once', () => {
  let cleanup: (() => void) | undefined;
  let engine: Engine | undefined;
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
    cleanup?.();
  });

  it('give back the slots of the rolled-back run: 12 instances on 2 slots all complete, each step run once', async () => {
    const dir = tempDir();
    cleanup = dir.cleanup;
    const calls = new Map<string, number>();
    const counted: NodeType<Record<string, never>> = {
      type: 'counted',
      title: 'Counted',
      description: 'Counts its runs (tests)',
      icon: 'pass',
      group: 'Test',
      configSchema: z.strictObject({}),
      execute: (ctx) => {
        const key = `${ctx.instanceId}:${ctx.nodeId}`;
        calls.set(key, (calls.get(key) ?? 0) + 1);
        return new Promise((resolve) => setTimeout(() => resolve({ output: 1 }), 5));
      },
    };
    const registry = createDefaultRegistry();
    registry.register(counted);
    const storage = twiceRun(openSqliteStorage(path.join(dir.dir, 'runnel.db')));
    engine = new Engine(storage, { registry, concurrency: 2, pollIntervalMs: 10 });
    await engine.deploy({
      name: 'two',
      nodes: [{ id: 'a', type: 'counted', config: {} }, { id: 'b', type: 'counted', config: {} }],
      edges: [{ from: 'a', to: 'b' }],
    });
    engine.startWorker();
    const ids: number[] = [];
    // Started one by one while the worker runs: each start is offered eager dispatch.
    for (let i = 0; i < 12; i++) ids.push(await engine.start('two', {}));
    const e = engine;
    await e.runUntil(async () => (await Promise.all(ids.map((id) => e.instanceState(id)))).every((s) => s.status === 'COMPLETED'), 20_000);
    expect(storage.runs).toBeGreaterThan(24);
    expect([...calls.values()].every((n) => n === 1)).toBe(true);
    expect(calls.size).toBe(24);
  });
});
