/**
 * The change feed's cursor on PostgreSQL, where history ids are identity values taken at insert
 * and transactions commit in any order (engine/db/postgres/changes.ts). A real write transaction
 * of the storage port is held open in a child process (test/helpers/held-writer.ts) after it drew
 * a history id, while this process commits later ids. Then: the later ids are committed and
 * visible (the hazard is real), yet a feed read answers none of them while the held id may still
 * commit; it waits, and once the held transaction ends answers the held id and the later ones in
 * order, so a reader resuming after any answered cursor skips nothing. A held transaction that
 * rolls back leaves a gap, never a skip. A read that waits longer than its storage's `feedWaitMs`
 * fails DATABASE_BUSY instead of answering past an unfinished transaction. A read granted the lock
 * finishes without its process (one query text): a write transaction of the same process whose
 * thread is blocked meanwhile goes on.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FEED_LOCK_KEY } from '../../../engine/db/postgres/changes';
import { openPostgresStorage, type PostgresStorage } from '../../../engine/db/postgres/storage';
import { Engine } from '../../../engine/runtime/engine';
import { tempPostgres } from '../../helpers/postgres';
import { killChildren, spawnScript, waitFor, type Child } from '../../helpers/processes';
import { runToSettled, tempDir } from '../../helpers/temp-engine';

const HELD_WRITER = path.join(import.meta.dirname, '../../helpers/held-writer.ts');
/** The feed lock's two halves as pg_locks shows a single-bigint advisory key. */
const LOCK_CLASSID = Math.floor(FEED_LOCK_KEY / 2 ** 32);
const LOCK_OBJID = FEED_LOCK_KEY % 2 ** 32;

let db: Awaited<ReturnType<typeof tempPostgres>>;
let engine: Engine;
let admin: pg.Client;
let temp: ReturnType<typeof tempDir>;
const opened: PostgresStorage[] = [];

beforeEach(async () => {
  db = await tempPostgres();
  temp = tempDir('runnel-feed-order-');
  engine = Engine.open(db.url, { pollIntervalMs: 10 });
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  await engine.deploy({ name: 'steps', nodes: [{ id: 'a', type: 'pass', config: {} }, { id: 'b', type: 'pass', config: {} }], edges: [{ from: 'a', to: 'b' }] });
});
afterEach(async () => {
  await killChildren();
  for (const s of opened.splice(0)) await s.close();
  await admin.end();
  await engine.close();
  await db.drop();
  temp.cleanup();
});

/** A second backend on the database whose feed reads wait as long as a test takes to let the writer go. */
function patientStorage(): PostgresStorage {
  const s = openPostgresStorage(db.url, { feedWaitMs: 60_000 });
  opened.push(s);
  return s;
}

/** Runs one instance to the end; answers its history ids. */
async function runOne(): Promise<number[]> {
  const id = await engine.start('steps');
  await runToSettled(engine, id);
  return (await engine.history(id, 0, 100)).map((e) => e.id);
}

/** Starts the held writer; resolves with it and the history id it drew (uncommitted). */
async function holdWriter(gate: string, mode?: 'rollback'): Promise<{ child: Child; heldId: number }> {
  const child = spawnScript(HELD_WRITER, mode === undefined ? [db.url, gate] : [db.url, gate, mode]);
  const m = await waitFor(() => /APPENDED (\d+)/.exec(child.stdout()) ?? (child.done ? new Error(child.stderr()) : null), 30_000, 'the held writer');
  if (m instanceof Error) throw m;
  return { child, heldId: Number(m[1]) };
}

/** Advisory locks on the feed's key: who holds which mode, and who waits. */
async function feedLocks(): Promise<{ mode: string; granted: boolean }[]> {
  const r = await admin.query<{ mode: string; granted: boolean }>(
    `SELECT mode, granted FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND objid = $2 AND objsubid = 1
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY granted DESC, mode`,
    [LOCK_CLASSID, LOCK_OBJID],
  );
  return r.rows;
}

describe('change feed on PostgreSQL: the cursor against out-of-order commits', () => {
  it('answers nothing past a transaction still running, then its entry and the later ones in order', async () => {
    // given: committed history, then a write transaction that drew the next id and holds it open
    const first = await runOne();
    const gate = path.join(temp.dir, 'gate');
    const { child, heldId } = await holdWriter(gate);
    expect(heldId).toBeGreaterThan(Math.max(...first));
    // the writer holds the feed's lock in SHARE mode, as every write transaction of the port does
    expect(await feedLocks()).toEqual([{ mode: 'ShareLock', granted: true }]);

    // when: later ids commit while it is open
    const later = await runOne();
    expect(Math.min(...later)).toBeGreaterThan(heldId);
    // then: they are committed and visible while the held id is not: a naive max(id) would skip it
    const visible = (await admin.query<{ id: string }>('SELECT id FROM history WHERE id >= $1 ORDER BY id', [heldId])).rows.map((r) => Number(r.id));
    expect(visible).toEqual(later);

    // when: the feed is read after the first instance's entries
    const after = Math.max(...first);
    let answered = false;
    const reading = patientStorage().read.changes({ after, limit: 1000 }).finally(() => (answered = true));
    // then: the read waits for the held transaction (its EXCLUSIVE request queued behind the SHARE lock)
    await waitFor(async () => (await feedLocks()).some((l) => l.mode === 'ExclusiveLock' && !l.granted), 30_000, 'the read waiting on the feed lock');
    expect(answered).toBe(false);

    // when: the held transaction commits
    fs.writeFileSync(gate, '');
    const page = await reading;
    await child.exited;
    expect(child.stdout()).toContain('COMMITTED');

    // then: the held entry comes first, then the later ones, each once, ascending
    expect(page.entries.map((e) => e.cursor)).toEqual([heldId, ...later]);
    expect(page.entries[0]).toMatchObject({ cursor: heldId, type: 'test.held', instanceId: null, workflow: null, data: { held: true } });
    expect(page).toMatchObject({ cursor: Math.max(...later), head: Math.max(...later) });
    expect(await feedLocks()).toEqual([]);
  });

  it('leaves a gap, never a skip, when the held transaction rolls back', async () => {
    const first = await runOne();
    const gate = path.join(temp.dir, 'gate');
    const { child, heldId } = await holdWriter(gate, 'rollback');
    const later = await runOne();
    const reading = patientStorage().read.changes({ after: Math.max(...first), limit: 1000 });
    await waitFor(async () => (await feedLocks()).some((l) => !l.granted), 30_000, 'the read waiting on the feed lock');
    fs.writeFileSync(gate, '');
    const page = await reading;
    await child.exited;
    expect(child.stdout()).toContain('ROLLED BACK');
    expect(page.entries.map((e) => e.cursor)).toEqual(later);
    expect(page.entries.some((e) => e.cursor === heldId)).toBe(false);
  });

  it('fails DATABASE_BUSY, answering nothing, when the running transactions outlast feedWaitMs', async () => {
    await runOne();
    const gate = path.join(temp.dir, 'gate');
    const { child } = await holdWriter(gate);
    await runOne();
    const impatient = openPostgresStorage(db.url, { feedWaitMs: 50 });
    opened.push(impatient);
    await expect(impatient.read.changes({ after: 0, limit: 1000 })).rejects.toMatchObject({ code: 'DATABASE_BUSY' });
    // the writer was never disturbed: it commits once let go
    fs.writeFileSync(gate, '');
    await child.exited;
    expect(child.stdout()).toContain('COMMITTED');
    const page = await impatient.read.changes({ after: 0, limit: 1000 });
    const ids = page.entries.map((e) => e.cursor);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(page.entries.filter((e) => e.type === 'test.held')).toHaveLength(1);
  });

  it('a read granted the lock needs nothing more of its process: a write transaction of that process, blocked meanwhile, goes on', async () => {
    // given: a storage whose write transactions wait 3 s for a lock at most and are not run again
    // after (DATABASE_BUSY), and another process's write transaction holding the feed's lock
    const storage = openPostgresStorage(db.url, { feedWaitMs: 60_000, busyTimeoutMs: 3000, txRetries: 0 });
    opened.push(storage);
    const gate = path.join(temp.dir, 'gate');
    const { child, heldId } = await holdWriter(gate);
    // when: a feed read of this process queues for the lock
    const reading = storage.read.changes({ after: 0, limit: 1000 });
    await waitFor(async () => (await feedLocks()).some((l) => l.mode === 'ExclusiveLock' && !l.granted), 30_000, 'the read waiting on the feed lock');
    // and this process's own write transaction starts, its thread blocked until its first statement gets the
    // lock (queued behind the read), while another process lets the held writer go 200 ms later
    const releaser = spawn(process.execPath, ['-e', `setTimeout(() => require('node:fs').writeFileSync(${JSON.stringify(gate)}, ''), 200)`], { stdio: 'ignore' });
    const released = once(releaser, 'exit');
    const written = await storage.write((q) => q.history.append({ instanceId: null, nodeId: null, type: 'test.after', at: Date.now(), data: null }));
    // then: the write committed (a read that held the lock until this thread sent its next statement
    // would have kept it waiting until its lock timeout: DATABASE_BUSY), after the read's head
    const page = await reading;
    await child.exited;
    await released;
    expect(child.stdout()).toContain('COMMITTED');
    expect(page.entries.map((e) => e.type)).toContain('test.held');
    expect(page.head).toBeGreaterThanOrEqual(heldId);
    expect(written).toBeGreaterThan(heldId);
    expect((await storage.read.changes({ after: page.cursor, limit: 1000 })).entries.map((e) => [e.cursor, e.type])).toEqual([[written, 'test.after']]);
    expect(await feedLocks()).toEqual([]);
  });
});
