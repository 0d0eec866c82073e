/**
 * Retention's statements on SQLite (engine/db/queries/retention.ts) take their id lists as a
 * `json_each` parameter. Each must walk the list and seek each instance by its rowid: a plan that
 * walks the instance table, or an index of it, once a batch makes a prune's cost grow with the
 * file (90,000 of 100,000 instances took 268 s to prune when the ended instances' mark walked
 * `instance_status` and scanned the list for every row; 0.8 s for 36,000 once it did not). Real
 * file, migrated by the engine, the plans SQLite itself chooses (EXPLAIN QUERY PLAN), with and
 * without the statistics ANALYZE leaves.
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

  it('no statement taking an id list walks the instances: one rowid seek per listed id', async () => {
    const dir = tempDir();
    cleanup = dir.cleanup;
    storage = openSqliteStorage(path.join(dir.dir, 'runnel.db'));
    const raw = storage.db.raw;
    // A file with ended instances, children among them (the trees' walk), before and after ANALYZE
    await storage.write((q) => {
      const wf = q.workflows.insert({ name: 'w', version: 1, dslJson: '{"name":"w","nodes":[],"edges":[]}', hash: 'h', now: 1000, nodes: [] });
      for (let k = 0; k < 300; k++) {
        const id = q.instances.insert({ workflowId: wf, status: 'PENDING', variablesJson: '{}', now: 1000, deadlineAt: null, businessKey: null });
        q.history.append({ instanceId: id, nodeId: null, type: 'instance.created', at: 1000 });
      }
    });
    raw.prepare(`UPDATE instance SET status = 'COMPLETED', ended_at = 2000`).run();
    raw.prepare(`UPDATE instance SET parent_id = id - 1 WHERE id % 3 = 0`).run();
    const statements = retentionStatements(raw).filter((sql) => sql.includes('json_each'));
    // (the mark, the deletes of every table, the trees, the dry run's counts)
    expect(statements.length).toBeGreaterThanOrEqual(15);
    for (const analyzed of [false, true]) {
      if (analyzed) raw.exec('ANALYZE');
      const walks = statements.map((sql) => ({ sql: sql.replace(/\s+/g, ' ').slice(0, 80), walks: instanceWalks(raw, sql) })).filter((s) => s.walks.length > 0);
      expect(walks, analyzed ? 'after ANALYZE' : 'without statistics').toEqual([]);
    }
  });
});
