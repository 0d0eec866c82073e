/**
 * Retention's statements on SQLite (engine/db/queries/retention.ts) take their id lists as a
 * `json_each` parameter. Each must walk the list and seek each instance by its rowid: a plan that
 * walks the instance table, or an index of it, once a batch makes a prune's cost grow with the
 * file (90,000 of 100,000 instances took 268 s to prune when the ended instances' mark walked
 * `instance_status` and scanned the list for every row; 0.8 s for 36,000 once it did not). A
 * batch's candidates walk the status's index from the cursor (after ANALYZE SQLite chose the
 * whole table by rowid), and a rule with nothing old enough walks nothing. Real file, migrated by
 * the engine, the plans SQLite itself chooses (EXPLAIN QUERY PLAN), with and without the
 * statistics ANALYZE leaves.
 */
import path from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStorage, type SqliteStorage } from '../../../engine/db/sqlite-storage';
import { createRetentionQueries } from '../../../engine/db/queries/retention';
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

  it('a rule walks only up to its newest instance old enough, and nothing when none is: one look-up answers it', async () => {
    const raw = await fileWith(50);
    raw.prepare(`UPDATE instance SET status = 'COMPLETED', ended_at = 2000 + id`).run();
    const retention = createRetentionQueries(raw);
    // Which statements run (their SQL), while `fn` runs
    const ran = (fn: () => unknown): { result: unknown; sql: string[] } => {
      const proto = Object.getPrototypeOf(raw.prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
      const originals = { all: proto.all!, get: proto.get! };
      const sql: string[] = [];
      for (const m of ['all', 'get'] as const)
        proto[m] = function (this: { source: string }, ...a: unknown[]) {
          sql.push(this.source);
          return originals[m].apply(this, a);
        };
      try {
        return { result: fn(), sql };
      } finally {
        Object.assign(proto, originals);
      }
    };
    const walked = (sql: string[]) => sql.filter((q) => q.includes('INDEXED BY instance_status'));
    // When no instance ended before the cutoff
    const none = ran(() => retention.candidates({ status: 'COMPLETED', endedBefore: 2000, afterId: 0, limit: 500 }));
    // Then nothing is walked, and nothing is answered
    expect(none.result).toEqual([]);
    expect(walked(none.sql)).toEqual([]);
    expect(none.sql).toHaveLength(1);
    // When ten did, the batch walks and answers exactly those ten, oldest id first
    const ten = ran(() => retention.candidates({ status: 'COMPLETED', endedBefore: 2011, afterId: 0, limit: 500 }));
    expect(ten.result).toEqual(Array.from({ length: 10 }, (_, k) => k + 1));
    expect(walked(ten.sql)).toHaveLength(1);
    // And a later batch of the pass (a cursor past 0) walks from its cursor with no second look-up
    const later = ran(() => retention.candidates({ status: 'COMPLETED', endedBefore: 2011, afterId: 5, limit: 500 }));
    expect(later.result).toEqual([6, 7, 8, 9, 10]);
    expect(later.sql).toHaveLength(1);
    // And the pass's last batch, its cursor at the newest old enough, walks nothing (the forty younger are not read)
    const last = ran(() => retention.candidates({ status: 'COMPLETED', endedBefore: 2011, afterId: 10, limit: 500 }));
    expect(last).toEqual({ result: [], sql: [] });
  });
});
