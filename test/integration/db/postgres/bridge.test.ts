/**
 * The sync bridge (engine/db/postgres/bridge.ts) on a real PostgreSQL database: statements answer
 * synchronously with their rows, errors carry their SQLSTATE, a transaction stays on one
 * connection (and fails rather than going on outside it when that connection is lost), a dead
 * thread fails requests instead of hanging them, and what one query costs over the driver.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openBridge, PgQueryError, type SyncBridge } from '../../../../engine/db/postgres/bridge';
import { EngineError } from '../../../../engine/errors';
import { tempPostgres } from '../../../helpers/postgres';

let db: Awaited<ReturnType<typeof tempPostgres>>;
let bridge: SyncBridge | undefined;

beforeEach(async () => {
  db = await tempPostgres();
});

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
  await db.drop();
});

/** The error `fn` throws. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('it did not throw');
}

describe('the sync bridge', () => {
  it('answers statements synchronously, with BIGINT as numbers and parameters bound', () => {
    bridge = openBridge(db.url);
    const r = bridge.query<{ a: number; b: number; c: string }>('SELECT 1::int AS a, 9007199254740991::bigint AS b, $1::text AS c', ['é🙂']);
    expect(r.rows).toEqual([{ a: 1, b: 9007199254740991, c: 'é🙂' }]);
    expect(r.command).toBe('SELECT');
    bridge.query('CREATE TABLE t (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v TEXT UNIQUE)');
    const ins = bridge.query<{ id: number }>('INSERT INTO t (v) VALUES ($1), ($2) RETURNING id', ['x', 'y']);
    expect(ins).toMatchObject({ command: 'INSERT', rowCount: 2, rows: [{ id: 1 }, { id: 2 }] });
  });

  it('carries errors back with their SQLSTATE code', () => {
    bridge = openBridge(db.url);
    const missing = thrown(() => bridge?.query('SELECT * FROM nowhere'));
    expect(missing).toBeInstanceOf(PgQueryError);
    expect((missing as PgQueryError).code).toBe('42P01');
    bridge.query('CREATE TABLE u (v TEXT PRIMARY KEY)');
    bridge.query('INSERT INTO u VALUES ($1)', ['a']);
    const dup = thrown(() => bridge?.query('INSERT INTO u VALUES ($1)', ['a'])) as PgQueryError;
    expect([dup.code, dup.constraint]).toEqual(['23505', 'u_pkey']);
    // the connection is still good after an error
    expect(bridge.query('SELECT count(*) AS n FROM u').rows).toEqual([{ n: 1 }]);
  });

  it('keeps BEGIN … ROLLBACK / COMMIT on one connection', () => {
    bridge = openBridge(db.url);
    bridge.query('CREATE TABLE w (v INT)');
    bridge.begin();
    bridge.query('INSERT INTO w VALUES (1)', []);
    expect(bridge.inTransaction).toBe(true);
    bridge.rollback();
    bridge.begin();
    bridge.query('INSERT INTO w VALUES (2)', []);
    bridge.commit();
    expect(bridge.query('SELECT v FROM w').rows).toEqual([{ v: 2 }]);
  });

  it('sends queued statements pipelined with the next request: in order, in one round trip, the first error the answer', async () => {
    bridge = openBridge(db.url, { applicationName: 'runnel-pipelined' });
    bridge.query('CREATE TABLE p (n INT PRIMARY KEY, v TEXT)');
    // given statements queued in a transaction, then a query that answers
    bridge.begin();
    for (let n = 1; n <= 50; n++) bridge.queue('INSERT INTO p VALUES ($1, $2)', [n, `v${n}`]);
    bridge.queue('UPDATE p SET v = v || $1 WHERE n <= $2', ['!', 2]);
    // then they ran before it, in order (the update saw the inserts)
    expect(bridge.query<{ n: number }>('SELECT count(*)::int AS n FROM p WHERE v LIKE $1', ['%!']).rows).toEqual([{ n: 2 }]);
    bridge.commit();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      // when a queued statement fails in the middle of a batch
      bridge.begin();
      bridge.queue('INSERT INTO p VALUES ($1, $2)', [100, 'before']);
      bridge.queue('INSERT INTO p VALUES ($1, $2)', [1, 'taken']);
      bridge.queue('INSERT INTO p VALUES ($1, $2)', [101, 'after']);
      const err = thrown(() => bridge?.query('SELECT count(*)::int AS n FROM p', [])) as PgQueryError;
      // then its error is the answer (not the aborted transaction's of the statements after it)
      expect([err.code, err.constraint]).toEqual(['23505', 'p_pkey']);
      bridge.rollback();
      // and nothing of the batch stayed
      expect((await client.query('SELECT n FROM p WHERE n >= 100')).rows).toEqual([]);
      // when the failing statement is queued before a COMMIT
      bridge.begin();
      bridge.queue('INSERT INTO p VALUES ($1, $2)', [102, 'before']);
      bridge.queue('INSERT INTO p VALUES ($1, $2)', [2, 'taken']);
      const failed = thrown(() => bridge?.commit()) as PgQueryError;
      // then the failure is the answer, and the transaction was rolled back
      expect(failed.code).toBe('23505');
      expect(bridge.inTransaction).toBe(false);
      expect((await client.query(`SELECT state FROM pg_stat_activity WHERE application_name = 'runnel-pipelined'`)).rows).toEqual([{ state: 'idle' }]);
      expect((await client.query('SELECT n FROM p WHERE n >= 100')).rows).toEqual([]);
      // and the connection goes on: a statement prepared in a failed batch is prepared again
      bridge.begin();
      bridge.queue('INSERT INTO p VALUES ($1, $2)', [103, 'later']);
      bridge.commit();
      expect((await client.query('SELECT v FROM p WHERE n >= 100')).rows).toEqual([{ v: 'later' }]);
    } finally {
      await client.end();
    }
  });

  it('fails a transaction whose connection the server ended, and reconnects for the next one', async () => {
    bridge = openBridge(db.url, { applicationName: 'runnel-bridge-test' });
    bridge.query('CREATE TABLE k (v INT)');
    bridge.begin();
    bridge.query('INSERT INTO k VALUES (1)', []);
    // when an administrator ends the session in the middle of the transaction
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'runnel-bridge-test'`);
    await admin.end();
    // then the transaction's next statement fails (57P01 or a lost connection), and so does every later one of it
    const first = thrown(() => bridge?.query('INSERT INTO k VALUES (2)', []));
    expect(first).toBeInstanceOf(PgQueryError);
    const second = thrown(() => bridge?.query('INSERT INTO k VALUES (3)', [])) as PgQueryError;
    expect(second.code).toBe('08003');
    bridge.rollback();
    // and a new transaction runs on a new connection, with nothing of the lost one kept
    bridge.begin();
    bridge.query('INSERT INTO k VALUES (4)', []);
    bridge.commit();
    expect(bridge.query('SELECT v FROM k').rows).toEqual([{ v: 4 }]);
  });

  it('fails requests with DATABASE_UNAVAILABLE once its thread died, without hanging', () => {
    bridge = openBridge(db.url);
    const t0 = Date.now();
    const died = thrown(() => bridge?.crashForTest());
    expect(died).toBeInstanceOf(EngineError);
    expect((died as EngineError).code).toBe('DATABASE_UNAVAILABLE');
    expect(bridge.dead).toBe(true);
    const after = thrown(() => bridge?.query('SELECT 1'));
    expect((after as EngineError).code).toBe('DATABASE_UNAVAILABLE');
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it('gives up on a thread whose heartbeat stopped (hung), within deadAfterMs, and ends it', async () => {
    bridge = openBridge(db.url, { deadAfterMs: 600 });
    const t0 = Date.now();
    const hung = thrown(() => bridge?.hangForTest()) as EngineError;
    expect(hung.code).toBe('DATABASE_UNAVAILABLE');
    expect(hung.message).toMatch(/no heartbeat for 600 ms/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(600);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(bridge.dead).toBe(true);
    expect((thrown(() => bridge?.query('SELECT 1')) as EngineError).code).toBe('DATABASE_UNAVAILABLE');
    await bridge.close(); // the thread was terminated: close returns
  });

  it('ends its thread at close', async () => {
    bridge = openBridge(db.url);
    await bridge.close();
    expect(bridge.dead).toBe(true);
    expect((thrown(() => bridge?.query('SELECT 1')) as EngineError).code).toBe('DATABASE_UNAVAILABLE');
    await bridge.close(); // twice is harmless
  });

  it('reports a refused connection and a missing database by their codes', () => {
    expect((thrown(() => openBridge('postgres://runnel@127.0.0.1:1/postgres')) as PgQueryError).code).toBe('ECONNREFUSED');
    const url = new URL(db.url);
    url.pathname = '/runnel_no_such_database';
    expect((thrown(() => openBridge(url.toString())) as PgQueryError).code).toBe('3D000');
  });

  it('measures its per-query overhead over the driver', async () => {
    // Medians of a prepared one-row query, through the bridge and awaited on a Client on this thread.
    const n = 2000;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const direct: number[] = [];
    for (let i = 0; i < n + 200; i++) {
      const t = process.hrtime.bigint();
      await client.query({ name: 'one', text: 'SELECT $1::int AS x', values: [i] });
      if (i >= 200) direct.push(Number(process.hrtime.bigint() - t) / 1000);
    }
    await client.end();
    bridge = openBridge(db.url);
    const bridged: number[] = [];
    for (let i = 0; i < n + 200; i++) {
      const t = process.hrtime.bigint();
      bridge.query('SELECT $1::int AS x', [i]);
      if (i >= 200) bridged.push(Number(process.hrtime.bigint() - t) / 1000);
    }
    const d = median(direct);
    const b = median(bridged);
    console.log(`bridge overhead: median ${b.toFixed(0)} µs through the bridge vs ${d.toFixed(0)} µs on the driver directly (+${(b - d).toFixed(0)} µs)`);
    // A loose bound (a shared 2-core machine): the hop must stay well under a millisecond.
    expect(b - d).toBeLessThan(1000);
  });
});
