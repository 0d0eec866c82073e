/**
 * Per-status instance counts under a list filter: the numbers on the monitor's status chips.
 *
 * Kept apart from instance-repository.ts so the API can add it without touching the list
 * queries; the filter's meaning (and its SQL) is the same as `InstanceRepository.list`'s, minus
 * `status` and paging.
 */
import type Database from 'better-sqlite3';
import { buildInstanceWhere, type InstanceFilter } from './instance-repository';
import type { Stmt } from './runtime-repository';

/** The filter {@link InstanceCountRepository.countByStatus} takes: a list filter without status and paging. */
export type InstanceCountFilter = Omit<InstanceFilter, 'status' | 'beforeId' | 'afterId' | 'upToId' | 'ids' | 'limit'>;

/** Prepared count queries; see {@link createInstanceCountRepository}. */
export type InstanceCountRepository = ReturnType<typeof createInstanceCountRepository>;

/** Prepares the count queries on `db` (statements cached per filter shape). */
export function createInstanceCountRepository(db: Database.Database) {
  const cache = new Map<string, Stmt<unknown[], { status: string; count: number }>>();
  return {
    /**
     * Instance count per status among instances matching `filter` (statuses with none are absent).
     * The filter means what it means for the list (`buildInstanceWhere`): one meaning for both.
     */
    countByStatus(filter: InstanceCountFilter = {}): Record<string, number> {
      const { terms, params, joinWorkflow } = buildInstanceWhere(filter, { status: false, paging: false });
      // Without a workflow filter the join is not needed: the plain GROUP BY uses the status index.
      const join = joinWorkflow ? 'JOIN workflow w ON w.id = i.workflow_id' : '';
      const sql = `SELECT i.status AS status, count(*) AS count FROM instance i ${join}
        ${terms.length > 0 ? `WHERE ${terms.join(' AND ')}` : ''} GROUP BY i.status`;
      let stmt = cache.get(sql);
      if (!stmt) {
        stmt = db.prepare<unknown[], { status: string; count: number }>(sql);
        cache.set(sql, stmt);
      }
      const out: Record<string, number> = {};
      for (const row of stmt.all(...params)) out[row.status] = row.count;
      return out;
    },
  };
}
