/**
 * The PostgreSQL storage backend's write path (engine/db/postgres/storage.ts) on a real database:
 * an example workflow runs to COMPLETED through Engine.open(url); opening a missing database or an
 * unreachable server is a typed error that never shows the password; a deadlock is rolled back
 * and the transaction runs again; and a worker's leases stay alive, renewed by the bridge's
 * thread, while a handler holds the engine's thread.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openBridge } from '../../../../engine/db/postgres/bridge';
import { instanceLockKeys } from '../../../../engine/db/postgres/queries/context';
import type { PostgresStorage } from '../../../../engine/db/postgres/storage';
import { EngineError } from '../../../../engine/errors';
import { createDefaultRegistry } from '../../../../engine/nodes/registry';
import { Engine } from '../../../../engine/runtime/engine';
import { tempPostgres } from '../../../helpers/postgres';

const EXAMPLES = fileURLToPath(new URL('../../../../examples/', import.meta.url));

let db: Awaited<ReturnType<typeof tempPostgres>>;
const engines: Engine[] = [];

beforeEach(async () => {
  db = await tempPostgres();
});

afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
  await db.drop();
});

function open(options: Parameters<typeof Engine.open>[1] = {}): Engine {
  const e = Engine.open(db.url, { pollIntervalMs: 10, ...options });
  engines.push(e);
  return e;
}

/** The EngineError `fn` throws. */
function thrown(fn: () => unknown): EngineError {
  try {
    fn();
  } catch (err) {
    if (err instanceof EngineError) return err;
    throw err;
  }
  throw new Error('it did not throw');
}

describe('the PostgreSQL backend', () => {
  it('runs the purchase-approval example to COMPLETED through Engine.open(url)', async () => {
    // given the example deployed on a new PostgreSQL database
    const engine = open();
    expect(engine.storage.location).toBe(db.url);
    const def = JSON.parse(fs.readFileSync(path.join(EXAMPLES, 'purchase-approval.workflow.json'), 'utf8')) as { name: string };
    await engine.deploy(def);
    // when an instance runs to its approval, a person approves, and it runs on
    const id = await engine.start(def.name, { variables: { requester: 'ana', currency: 'EUR' } });
    await engine.runUntil(() => engine.isSettled(id), 20_000);
    expect((await engine.getInstance(id)).status).toBe('WAITING');
    await engine.approve(id, 'approve', { approved: true, actor: 'boss' });
    await engine.runUntil(() => engine.isSettled(id), 20_000);
    // then it completed along the approved branch, every step once
    const inst = await engine.getInstance(id);
    expect(inst.status).toBe('COMPLETED');
    expect(Object.fromEntries(inst.nodes.map((n) => [n.id, [n.status, n.attempt]]))).toEqual({
      total: ['COMPLETED', 1],
      approve: ['COMPLETED', 1],
      order: ['COMPLETED', 1],
      'notify-rejection': ['SKIPPED', 0],
    });
    const types = (await engine.history(id)).map((h) => h.type);
    expect(types[0]).toBe('instance.created');
    expect(types.at(-1)).toBe('instance.completed');
    expect(types.filter((t) => t === 'node.completed')).toHaveLength(3);
    // and a second engine on the same database sees the same
    const other = open();
    expect((await other.getInstance(id)).status).toBe('COMPLETED');
  });

  it('refuses a missing database with NOT_FOUND naming it, an unreachable server with DATABASE_UNAVAILABLE, never showing the password', () => {
    const missing = new URL(db.url);
    missing.pathname = '/runnel_missing_db';
    missing.password = 'hunter2-secret';
    const notFound = thrown(() => Engine.open(missing.toString()));
    expect(notFound.code).toBe('NOT_FOUND');
    expect(notFound.message).toContain('runnel_missing_db');
    expect(notFound.message).not.toContain('hunter2-secret');
    const refused = thrown(() => Engine.open('postgresql://runnel:hunter2-secret@127.0.0.1:1/runnel'));
    expect(refused.code).toBe('DATABASE_UNAVAILABLE');
    expect(refused.message).not.toContain('hunter2-secret');
    expect(JSON.stringify(refused.details)).not.toContain('hunter2-secret');
    expect(refused.message).toContain('127.0.0.1:1');
  });

  it('rolls a deadlocked transaction back and runs it again', async () => {
    // given two instances, and another session holding instance A's row
    const conflicts: string[] = [];
    const engine = open({ onConflict: (err) => conflicts.push(String((err as { code?: string }).code)), busyTimeoutMs: 4000 });
    await engine.deploy({ name: 'two', nodes: [{ id: 'p', type: 'delay', config: { durationMs: 3_600_000 } }] });
    const [a, b] = await engine.startMany('two', [{}, {}]);
    const storage = engine.storage as PostgresStorage;
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('UPDATE instance SET updated_at = updated_at WHERE id = $1', [a]);
      // and that session asking, half a second from now, for the lock of instance B
      const later = other
        .query(`SELECT pg_sleep(0.5), pg_advisory_xact_lock(${instanceLockKeys('$1')})`, [b])
        .then(() => other.query('COMMIT'));
      await new Promise((r) => setTimeout(r, 50)); // sent, and sleeping on the server
      let runs = 0;
      // when a write takes instance B, then waits for instance A's row: a cycle PostgreSQL breaks by aborting one side
      await storage.write((q) => {
        runs++;
        q.instances.get(b as number);
        q.instances.setVariables({ id: a as number, variables: { run: runs }, now: Date.now() });
      });
      await later;
      // then the write met the deadlock, ran again, and committed once
      expect(conflicts).toContain('40P01');
      expect(runs).toBeGreaterThanOrEqual(2);
      expect((await engine.getInstance(a as number)).variables).toEqual({ run: runs });
    } finally {
      await other.end();
    }
  });

  it('throws a deferred statement\'s error where the statement was made: in its savepoint, or (run again) at its call', async () => {
    const engine = open();
    await engine.deploy({ name: 'one', nodes: [{ id: 'p', type: 'delay', config: { durationMs: 3_600_000 } }] });
    const id = await engine.start('one');
    const storage = engine.storage as PostgresStorage;
    const bogus = { instanceId: id, nodeId: 'p', status: 'BOGUS' as never };
    // a savepoint contains it (its queue is sent before it ends), and the transaction goes on to commit
    await storage.write((q) => {
      expect(() => q.savepoint(() => q.nodes.setStatus(bogus))).toThrow(/check constraint/);
      q.instances.setVariables({ id, variables: { after: 'savepoint' }, now: Date.now() });
    });
    expect((await engine.getInstance(id)).variables).toEqual({ after: 'savepoint' });
    // outside one, the write runs again with statements sent in place: the error is thrown by the call that made it
    const thrownAt: string[] = [];
    const err = await storage
      .write((q) => {
        try {
          q.nodes.setStatus(bogus);
        } catch (e) {
          thrownAt.push('setStatus');
          throw e;
        }
        q.instances.get(id);
        thrownAt.push('after');
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((err as { code?: string }).code).toBe('23514');
    expect(thrownAt).toEqual(['setStatus']);
  });

  it("goes on with a new bridge thread after its thread died", async () => {
    const engine = open();
    await engine.deploy({ name: 'before', nodes: [{ id: 'p', type: 'pass' }] });
    const storage = engine.storage as PostgresStorage;
    const first = storage.bridge;
    expect(() => first.crashForTest()).toThrow(/died/);
    await engine.deploy({ name: 'after', nodes: [{ id: 'p', type: 'pass' }] });
    expect(storage.bridge).not.toBe(first);
    expect((await engine.listWorkflows()).map((w) => w.name)).toEqual(['after', 'before']);
  });

  it("keeps a worker's lease alive from the bridge's thread while a handler holds the engine's thread", async () => {
    // given a node type that holds the thread for 2.5 s, watching its own lease meanwhile through a bridge of its own
    const leaseMs = 600;
    const watcher = openBridge(db.url);
    const margins: number[] = [];
    const registry = createDefaultRegistry();
    registry.register({
      type: 'hog',
      title: 'Hog',
      description: 'Holds the thread',
      icon: 'cpu',
      group: 'Test',
      configSchema: z.object({}),
      execute() {
        const until = Date.now() + 2500;
        let next = 0;
        while (Date.now() < until) {
          if (Date.now() < next) continue;
          next = Date.now() + 50;
          const r = watcher.query<{ e: number | null }>(`SELECT max(lease_expires_at) AS e FROM schedule WHERE kind = 'run'`).rows[0];
          if (r?.e != null) margins.push(r.e - Date.now());
        }
        return Promise.resolve({ output: { held: true } });
      },
    });
    const engine = open({ registry, leaseMs });
    try {
      await engine.deploy({ name: 'hogging', nodes: [{ id: 'h', type: 'hog' }] });
      // when it runs
      const id = await engine.start('hogging');
      await engine.runUntil(() => engine.isSettled(id), 20_000);
      // then its lease never ran out (renewed every leaseMs / 6 by the other thread), and the step completed once
      expect(margins.length).toBeGreaterThan(20);
      expect(Math.min(...margins)).toBeGreaterThan(0);
      const inst = await engine.getInstance(id);
      expect(inst.status).toBe('COMPLETED');
      expect(inst.nodes[0]).toMatchObject({ status: 'COMPLETED', attempt: 1 });
    } finally {
      await watcher.close();
    }
  });

  it("tells other engines about its commits (LISTEN/NOTIFY, or polling), never about their own", async () => {
    for (const listen of [true, false]) {
      const a = open({ listen });
      const b = open({ listen });
      let seenByA = 0;
      let seenByB = 0;
      a.on((e) => void (e.type === 'store.changed' && seenByA++));
      b.on((e) => void (e.type === 'store.changed' && seenByB++));
      a.watchExternalChanges(20);
      b.watchExternalChanges(20);
      await new Promise((r) => setTimeout(r, 300)); // the LISTEN connections are up
      await b.deploy({ name: `seen-${listen}`, nodes: [{ id: 'p', type: 'pass' }] });
      const t0 = Date.now();
      while (seenByA === 0 && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 10));
      expect(seenByA, `listen=${listen}`).toBeGreaterThan(0);
      if (listen) expect(seenByB).toBe(0);
    }
  });
});
