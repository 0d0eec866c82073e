/**
 * An outcome commits only while its claim is held (engine/runtime/state-machine/outcome.ts), and
 * on PostgreSQL that check must see a claim another worker has in flight. A fresh-clone CI run of
 * two-hosts.test.ts recorded a node's completion twice: the check read the row before taking the
 * instance's lock, so it still saw the worker's own expired lease while a second worker's claim of
 * the row was uncommitted; the outcome then waited for the lock and committed beside that claim,
 * whose run completed the node again. Here the second worker's claim is a transaction held open in
 * a thread of its own (this thread blocks inside the turn, as the engine's PostgreSQL bridge does).
 */
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createDefaultRegistry } from '../../../../engine/nodes/registry';
import { instanceLockKeys } from '../../../../engine/db/postgres/queries/context';
import { Engine } from '../../../../engine/runtime/engine';
import { heldNodes } from '../../../helpers/held-node';
import { tempPostgres } from '../../../helpers/postgres';

/** A thread that claims schedule row `rowId` as worker `other` in a transaction it holds `holdMs` before committing. */
const CLAIMER = `
const { parentPort, workerData } = require('node:worker_threads');
const { Client } = require('pg');
(async () => {
  const c = new Client({ connectionString: workerData.url });
  await c.connect();
  await c.query('BEGIN');
  await c.query(workerData.lockSql, [workerData.instanceId]);
  await c.query("UPDATE schedule SET lease_owner = 'other', next_run_at = $2, lease_expires_at = $2, version = version + 1 WHERE id = $1", [workerData.rowId, workerData.leaseUntil]);
  parentPort.postMessage('holding');
  await new Promise((r) => setTimeout(r, workerData.holdMs));
  await c.query('COMMIT');
  await c.end();
  parentPort.postMessage('committed');
})().catch((err) => parentPort.postMessage('error: ' + err.message));
`;

describe('an outcome beside another worker’s claim in flight (PostgreSQL)', () => {
  const done: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const d of done.splice(0).reverse()) await d();
  });

  it('commits nothing: the claim that took the row over runs the step', { timeout: 60_000 }, async () => {
    // given a worker whose handler is running a claimed step
    const db = await tempPostgres();
    done.push(() => db.drop());
    const held = heldNodes();
    const engine = Engine.open(db.url, { registry: createDefaultRegistry().register(held.type), concurrency: 1, pollIntervalMs: 10 });
    done.push(() => engine.close());
    await engine.deploy({ name: 'one-step', nodes: [{ id: 'hold', type: 'held', config: {} }], edges: [] });
    const id = await engine.start('one-step');
    for (const until = Date.now() + 20_000; held.waiting === 0 && Date.now() < until; ) {
      await engine.tick();
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(held.waiting).toBe(1);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    done.push(() => client.end());
    const rows = async () =>
      (await client.query<{ id: number; lease_owner: string | null }>('SELECT id::int, lease_owner FROM schedule WHERE instance_id = $1 AND node_id = $2', [id, 'hold'])).rows;
    const [row] = await rows();
    expect(row?.lease_owner).toBeTruthy();

    // when another worker's claim of the row is in flight (its transaction holds the instance's
    // lock and has leased the row for 4 s, uncommitted) as the handler's outcome commits (the
    // lease outlasts the turn, or that turn would claim the row back once it expired)
    const claimer = new Worker(CLAIMER, {
      eval: true,
      workerData: { url: db.url, lockSql: `SELECT pg_advisory_xact_lock(${instanceLockKeys('$1')})`, instanceId: id, rowId: row!.id, leaseUntil: Date.now() + 4000, holdMs: 1500 },
    });
    const messages: string[] = [];
    const committed = new Promise<void>((resolve) =>
      claimer.on('message', (m: string) => {
        messages.push(m);
        if (m !== 'holding') resolve();
      }),
    );
    done.push(async () => void (await claimer.terminate()));
    await new Promise<void>((resolve) => claimer.once('message', () => resolve()));
    expect(messages).toEqual(['holding']);
    held.letGo();
    await new Promise((r) => setTimeout(r, 20));
    await engine.tick();
    await committed;
    expect(messages).toEqual(['holding', 'committed']);

    // then the outcome committed nothing: the node is not completed, the row is the other worker's
    const completions = async () => (await engine.history(id)).filter((e) => e.type === 'node.completed' && e.nodeId === 'hold').length;
    expect(await completions()).toBe(0);
    expect((await rows()).map((r) => r.lease_owner)).toEqual(['other']);

    // and once that lease expires, the step runs again and completes once
    for (const until = Date.now() + 30_000; (await engine.getInstance(id)).status !== 'COMPLETED' && Date.now() < until; ) {
      await engine.tick();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await engine.getInstance(id)).status).toBe('COMPLETED');
    expect(await completions()).toBe(1);
  });
});
