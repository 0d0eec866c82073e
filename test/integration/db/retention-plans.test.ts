/**
 * Retention's statements on SQLite (engine/db/queries/retention.ts) take their id lists as a
 * `json_each` parameter. Each must walk the list and seek each instance by its rowid: a plan that
 * walks the instance table, or an index of it, once a batch makes a prune's cost grow with the
 * file (90,000 of 100,000 instances took 268 s to prune when the ended instances' mark walked
 * `instance_status` and scanned the list for every row; 0.8 s for 36,000 once it did not). A
 * batch's candidates walk the status's index from the cursor (after ANALYZE SQLite chose the
 * whole table by rowid) up to the newest instance old enough, which the pass looks up once and
 * carries in its cursors; a rule with nothing old enough walks nothing. Real file, migrated by
 * the engine, the plans SQLite itself chooses (EXPLAIN QUERY PLAN), with and without the
 * statistics ANALYZE leaves.
 */
import path from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStorage, type SqliteStorage } from '../../../engine/db/sqlite-storage';
import { createRetentionQueries } from '../../../engine/db/queries/retention';
import { pruneBatch, startCursors, type PruneRule, type RuleCursor } from '../../../engine/runtime/state-machine/retention';
import { tempDir } from '../../helpers/temp-engine';

/** The SQL of every statement `createRetentionQueries` prepares on `raw`. */
function retentionStatements(raw: Database.Database): string[] {
  const sql: string[] = [];
  const prepare = raw.prepare.bind(raw);
  (raw as { prepare: unknown }).prepare = (source: string) => {
    sql.push(source);
    return prepare(source);
  };
  try {
    createRetentionQueries(raw);
  } finally {
    (raw as { prepare: unknown }).prepare = prepare;
  }
  return sql;
}

/** The plan's steps that read the instance table other than by rowid (the whole table, or one of its indexes). */
function instanceWalks(raw: Database.Database, sql: string): string[] {
  const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => '[1,2,3]');
  const plan = raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[];
  return plan
    .map((r) => r.detail)
    .filter((d) => /^(SCAN|SEARCH) (i|c|instance)\b/.test(d) && !/INTEGER PRIMARY KEY \(rowid=\?\)/.test(d) && !/instance_parent \(parent_id=\?\)/.test(d));
}

describe('retention on SQLite: the id lists drive every plan', () => {
  let storage: SqliteStorage | undefined;
  let cleanup: (() => void) | undefined;
  afterEach(async () => {
    await storage?.close();
    storage = undefined;
    cleanup?.();
  });

  /** A fresh file with `n` instances of workflow `w` (ids 1…n), each with its `instance.created` entry; answers its connection. */
  async function fileWith(n: number): Promise<Database.Database> {
    const dir = tempDir();
    cleanup = dir.cleanup;
    const s = openSqliteStorage(path.join(dir.dir, 'runnel.db'));
    storage = s;
    await s.write((q) => {
      const wf = q.workflows.insert({ name: 'w', version: 1, dslJson: '{"name":"w","nodes":[],"edges":[]}', hash: 'h', now: 1000, nodes: [] });
      for (let k = 0; k < n; k++) {
        const id = q.instances.insert({ workflowId: wf, status: 'PENDING', variablesJson: '{}', now: 1000, deadlineAt: null, businessKey: null });
        q.history.append({ instanceId: id, nodeId: null, type: 'instance.created', at: 1000 });
      }
    });
    return s.db.raw;
  }

  it('no statement taking an id list walks the instances: one rowid seek per listed id', async () => {
    // A file with ended instances, children among them (the trees' walk), before and after ANALYZE
    const raw = await fileWith(300);
    raw.prepare(`UPDATE instance SET status = 'COMPLETED', ended_at = 2000`).run();
    raw.prepare(`UPDATE instance SET parent_id = id - 1 WHERE id % 3 = 0`).run();
    const statements = retentionStatements(raw).filter((sql) => sql.includes('json_each'));
    // (the mark, the deletes of every table, the trees, the dry run's counts)
    expect(statements.length).toBeGreaterThanOrEqual(15);
    for (const analyzed of [false, true]) {
      if (analyzed) raw.exec('ANALYZE');
      const walks = statements.map((sql) => ({ sql: sql.replace(/\s+/g, ' ').slice(0, 80), walks: instanceWalks(raw, sql) })).filter((s) => s.walks.length > 0);
      expect(walks, analyzed ? 'after ANALYZE' : 'without statistics').toEqual([]);
      // And a batch's candidates walk the status's index from the cursor up to the newest old enough, never the table by rowid
      const candidates = retentionStatements(raw).filter((sql) => /ORDER BY i\.id LIMIT @limit/.test(sql));
      expect(candidates).toHaveLength(2);
      for (const sql of candidates) {
        const plan = raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ status: 'COMPLETED', endedBefore: 3000, afterId: 0, upToId: 300, limit: 500, workflow: 'w' }) as { detail: string }[];
        expect(plan.map((r) => r.detail)).toContain('SEARCH i USING INDEX instance_status (status=? AND id>? AND id<?)');
      }
    }
  });

  it('a pass walks a rule only up to its newest instance old enough, looked up once by its first batch; none old enough walks nothing', async () => {
    const raw = await fileWith(50);
    raw.prepare(`UPDATE instance SET status = 'COMPLETED', ended_at = 2000 + id`).run();
    const s = storage as SqliteStorage;
    // Which statements run (their SQL), while `fn` runs
    const ran = async <T>(fn: () => Promise<T>): Promise<{ result: T; sql: string[] }> => {
      const proto = Object.getPrototypeOf(raw.prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
      const originals = { all: proto.all!, get: proto.get! };
      const sql: string[] = [];
      for (const m of ['all', 'get'] as const)
        proto[m] = function (this: { source: string }, ...a: unknown[]) {
          sql.push(this.source);
          return originals[m].apply(this, a);
        };
      try {
        return { result: await fn(), sql };
      } finally {
        Object.assign(proto, originals);
      }
    };
    const lookUps = (sql: string[]) => sql.filter((q) => q.includes('INDEXED BY instance_ended')).length;
    const walks = (sql: string[]) => sql.filter((q) => q.includes('INDEXED BY instance_status')).length;
    /** A dry pass of one rule in batches of 4 (each its own transaction): each batch's candidates, cursor and statements. */
    const pass = async (endedBefore: number) => {
      const rules: PruneRule[] = [{ status: 'COMPLETED', endedBefore }];
      let cursors = startCursors(rules);
      const batches: { roots: number; cursor: RuleCursor; done: boolean; lookUps: number; walks: number }[] = [];
      for (let guard = 0; guard < 20; guard++) {
        const { result, sql } = await ran(() => s.write((q) => pruneBatch(q, { rules, cursors, limit: 4, dryRun: true })));
        batches.push({ roots: result.byStatus.COMPLETED, cursor: result.cursors[0] as RuleCursor, done: result.done, lookUps: lookUps(sql), walks: walks(sql) });
        cursors = result.cursors;
        if (result.done) break;
      }
      return batches;
    };
    // When no instance ended before the cutoff: one look-up, no walk, the pass is over
    expect(await pass(2000)).toEqual([{ roots: 0, cursor: { afterId: 0, upToId: 0 }, done: true, lookUps: 1, walks: 0 }]);
    // When ten did (ids 1…10 of 50): the first batch looks up id 10, every batch walks from its
    // cursor up to it, and the last stops there (the forty younger are never read)
    expect(await pass(2011)).toEqual([
      { roots: 4, cursor: { afterId: 4, upToId: 10 }, done: false, lookUps: 1, walks: 1 },
      { roots: 4, cursor: { afterId: 8, upToId: 10 }, done: false, lookUps: 0, walks: 1 },
      { roots: 2, cursor: { afterId: 10, upToId: 10 }, done: true, lookUps: 0, walks: 1 },
    ]);
    // And at the queries: a cursor at its bound runs no statement at all
    const retention = createRetentionQueries(raw);
    expect(await ran(async () => retention.candidates({ status: 'COMPLETED', endedBefore: 2011, afterId: 10, upToId: 10, limit: 500 }))).toEqual({ result: [], sql: [] });
    expect(retention.newestEnded({ status: 'COMPLETED', endedBefore: 2011 })).toBe(10);
    expect(retention.newestEnded({ status: 'FAILED', endedBefore: 9999 })).toBeNull();
  });
});
