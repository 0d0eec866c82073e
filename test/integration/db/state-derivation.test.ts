/**
 * Time travel's record on SQLite derives the state a transaction ends with from its writes
 * (engine/store/state-effects.ts) instead of reading it again; the test suite runs with
 * RUNNEL_CHECK_STATE_RECORD=1, so every transaction of every test compares the derived state with
 * the stored one, and runs every read answered from the known state (`head`, `variables`,
 * `openCounts`) to compare its answer. Here: those checks are armed and catch a change the writes
 * did not make, a savepoint rolled back takes its effects with it, a read answered from the state
 * runs no statement, and a purge forgets what was known of the instances it deleted. Real SQLite file.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStorage, type SqliteStorage } from '../../../engine/db/sqlite-storage';
import { tempDir } from '../../helpers/temp-engine';

describe('time travel: the state derived from the writes', () => {
  let storage: SqliteStorage | undefined;
  let cleanup: (() => void) | undefined;
  afterEach(async () => {
    await storage?.close();
    storage = undefined;
    cleanup?.();
  });

  /** A storage on a fresh file with one workflow and a RUNNING instance of one RUNNING node `a`. */
  async function oneInstance(options: { checkStateRecord?: boolean } = {}): Promise<{ s: SqliteStorage; id: number }> {
    const dir = tempDir();
    cleanup = dir.cleanup;
    const s = openSqliteStorage(path.join(dir.dir, 'runnel.db'), options);
    storage = s;
    const id = await s.write((q) => {
      const wf = q.workflows.insert({ name: 'w', version: 1, dslJson: '{"name":"w","nodes":[],"edges":[]}', hash: 'h', now: 1000, nodes: [] });
      const instanceId = q.instances.insert({ workflowId: wf, status: 'RUNNING', variablesJson: '{"x":1}', now: 1000, deadlineAt: null, businessKey: null });
      q.nodes.insert({ instanceId, nodeId: 'a', status: 'RUNNING', attemptLimit: 3, pendingIn: 0, now: 1000 });
      q.history.append({ instanceId, nodeId: null, type: 'instance.created', at: 1000 });
      return instanceId;
    });
    return { s, id };
  }

  it('is checked in tests: a change no write of the families made fails the transaction, and nothing of it is committed', async () => {
    expect(process.env.RUNNEL_CHECK_STATE_RECORD).toBe('1');
    const { s, id } = await oneInstance();
    // When a transaction completes `a` through the node family but also edits the row behind its back
    const write = s.write((q) => {
      q.nodes.complete({ instanceId: id, nodeId: 'a', output: { ok: true }, now: 2000, seq: 1 });
      s.db.raw.prepare(`UPDATE node_state SET attempt = 7 WHERE instance_id = ? AND node_id = 'a'`).run(id);
    });
    // Then the check names the instance and the field, and the transaction rolled back
    await expect(write).rejects.toThrow(/time travel's record: instance \d+ .*"a":\{"a":7\}/);
    expect(s.db.raw.prepare(`SELECT status, attempt FROM node_state WHERE instance_id = ?`).get(id)).toEqual({ status: 'RUNNING', attempt: 1 });
  });

  it('a savepoint rolled back takes its effects with it; the record holds what committed', async () => {
    const { s, id } = await oneInstance();
    // When one savepoint pauses the instance, parks the node and throws, and the transaction then completes the node
    await s.write((q) => {
      expect(() =>
        q.savepoint(() => {
          q.instances.pause({ id, now: 1500 });
          q.nodes.park({ instanceId: id, nodeId: 'a', status: 'WAITING', wait: { kind: 'timer', until: 9000 } });
          q.history.append({ instanceId: id, nodeId: 'a', type: 'node.waiting', at: 1500 });
          throw new Error('rolled back');
        }),
      ).toThrow('rolled back');
      q.nodes.complete({ instanceId: id, nodeId: 'a', output: 5, now: 2000, seq: 1 });
      q.history.append({ instanceId: id, nodeId: 'a', type: 'node.completed', at: 2000 });
    });
    // Then the patch of that transaction is keyed by the entry that committed and holds the completion only
    const rows = s.db.raw.prepare(`SELECT s.history_id AS h, s.patch_json AS p FROM history_state s JOIN history h ON h.id = s.history_id WHERE h.instance_id = ? ORDER BY s.history_id`).all(id) as { h: number; p: string }[];
    const entries = s.db.raw.prepare(`SELECT id, type FROM history WHERE instance_id = ? ORDER BY id`).all(id) as { id: number; type: string }[];
    expect(entries.map((e) => e.type)).toEqual(['instance.created', 'node.completed']);
    expect(rows.map((r) => r.h)).toEqual(entries.map((e) => e.id));
    expect(JSON.parse(rows[1]!.p)).toEqual({ n: { a: { s: 'C', o: [5], f: 1000, q: 1 } } });
  });

  /** Counts the statements `fn` runs through `s`'s connection (better-sqlite3 `prepare` is wrapped while it runs). */
  async function countingStatements<T>(s: SqliteStorage, fn: () => Promise<T>): Promise<{ result: T; sql: string[] }> {
    const raw = s.db.raw;
    const sql: string[] = [];
    const prepare = raw.prepare.bind(raw);
    const seen = new WeakSet<object>();
    // Statements are prepared once per connection: wrap the ones already prepared by their methods instead.
    const proto = Object.getPrototypeOf(prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
    const originals = { get: proto.get!, all: proto.all!, run: proto.run! };
    for (const m of ['get', 'all', 'run'] as const)
      proto[m] = function (this: { source: string }, ...a: unknown[]) {
        if (!seen.has(this)) sql.push(this.source);
        return originals[m]!.apply(this, a);
      };
    try {
      return { result: await fn(), sql };
    } finally {
      Object.assign(proto, originals);
    }
  }

  it('a read answered from the state is checked in tests: an answer that differs from the database fails the transaction', async () => {
    const { s, id } = await oneInstance();
    // When the row changes behind the connection's back (no transaction of it, so its cache does not know)
    s.db.raw.prepare(`UPDATE instance SET deadline_at = 99 WHERE id = ?`).run(id);
    // Then the next transaction's head, answered from the cached state, is compared and refused
    await expect(s.write((q) => q.instances.head(id))).rejects.toThrow(/instances\.head\(\d+\) answered from the derived state .*"deadlineAt":null.*"deadlineAt":99/);
  });

  it('answers head, variables and open counts of a known instance without a statement, exactly as the statements do', async () => {
    // (Without the tests' check, which runs the statements too to compare.)
    const { s, id } = await oneInstance({ checkStateRecord: false });
    await s.write((q) => {
      q.instances.pause({ id, now: 1200 });
      q.nodes.insert({ instanceId: id, nodeId: 'b', status: 'PENDING', attemptLimit: 1, pendingIn: 1, now: 1200 });
    });
    const { result, sql } = await countingStatements(s, () => s.write((q) => ({ head: q.instances.head(id), variables: q.instances.variables(id), counts: q.nodes.openCounts(id) })));
    expect(result).toEqual({
      head: { id, status: 'RUNNING', deadlineAt: null, parentId: null, pausedAt: 1200, concurrencyKey: null, test: false },
      variables: { status: 'RUNNING', pausedAt: 1200, test: false, variables: { x: 1 }, pins: null },
      counts: { open: 2, active: 1 },
    });
    // Nothing of the instance was read: the transaction ran no statement on its tables
    expect(sql).toContain('BEGIN IMMEDIATE');
    expect(sql.filter((q) => /\b(instance|node_state)\b/.test(q))).toEqual([]);
    // And the statements answer the same (with the check on, each answer is compared too)
    await s.close();
    storage = openSqliteStorage(s.location, { checkStateRecord: true });
    expect(await storage.write((q) => ({ head: q.instances.head(id), variables: q.instances.variables(id), counts: q.nodes.openCounts(id) }))).toEqual(result);
  });

  it('keeps no state of an ended instance: the next read of it runs its statement, and answers the same', async () => {
    const { s, id } = await oneInstance({ checkStateRecord: false });
    const read = (q: Parameters<Parameters<SqliteStorage['write']>[0]>[0]) => ({ head: q.instances.head(id), counts: q.nodes.openCounts(id) });
    // Given a live instance: its reads are answered from the state the last transaction left
    const live = await countingStatements(s, () => s.write(read));
    expect(live.sql.filter((q) => /\b(instance|node_state)\b/.test(q))).toEqual([]);
    // When a transaction ends it
    await s.write((q) => {
      q.nodes.complete({ instanceId: id, nodeId: 'a', output: null, now: 2000, seq: 1 });
      q.instances.end({ id, status: 'COMPLETED', now: 2000 });
      q.history.append({ instanceId: id, nodeId: null, type: 'instance.completed', at: 2000 });
    });
    // Then the next transaction reads it from the tables (the connection kept nothing of it)
    const ended = await countingStatements(s, () => s.write(read));
    expect(ended.sql.filter((q) => /\bFROM instance\b/.test(q)).length).toBeGreaterThan(0);
    expect(ended.result).toEqual({
      head: { id, status: 'COMPLETED', deadlineAt: null, parentId: null, pausedAt: null, concurrencyKey: null, test: false },
      counts: { open: 0, active: 0 },
    });
  });

  it('a purge forgets what the connection knew of the instances it deleted', async () => {
    const { s, id } = await oneInstance();
    await s.write((q) => {
      q.nodes.complete({ instanceId: id, nodeId: 'a', output: null, now: 2000, seq: 1 });
      q.instances.end({ id, status: 'COMPLETED', now: 2000 });
      q.history.append({ instanceId: id, nodeId: null, type: 'instance.completed', at: 2000 });
    });
    // When a purge deletes it (its state was cached by the transaction before)
    const counts = await s.write((q) => q.retention.purge([id]));
    expect(counts.instances).toBe(1);
    // Then reads say it is gone, as the statements do
    expect(await s.write((q) => [q.instances.head(id), q.instances.variables(id), q.nodes.openCounts(id)])).toEqual([undefined, undefined, { open: 0, active: 0 }]);
  });

  it('a write begun while the one before awaits its commit knows what that one committed', async () => {
    // (Without the tests' check: the answer itself is what is asserted.)
    const { s, id } = await oneInstance({ checkStateRecord: false });
    // When two writes are issued together (the second's transaction runs before the first's promise resolves): the first pauses, the second reads
    const [, head, variables] = await Promise.all([
      s.write((q) => q.instances.pause({ id, now: 1500 })),
      s.write((q) => q.instances.head(id)),
      s.write((q) => {
        q.instances.setVariables({ id, variables: { x: 2 }, now: 1600 });
        return q.instances.variables(id);
      }),
    ]);
    // Then each saw the one before it
    expect(head?.pausedAt).toBe(1500);
    expect(variables).toMatchObject({ pausedAt: 1500, variables: { x: 2 } });
    // And time travel's record of the last one holds its own change only
    const last = s.db.raw.prepare(`SELECT patch_json AS p FROM history_state WHERE history_id = ?`).get(-id) as { p: string };
    expect(JSON.parse(last.p)).toEqual({ i: { p: 500 }, v: { x: [2] } });
  });
});
