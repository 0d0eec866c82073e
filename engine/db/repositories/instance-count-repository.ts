/**
 * Per-status instance counts under a list filter: the numbers on the monitor's status chips.
 *
 * Kept apart from instance-repository.ts so the API can add it without touching the list
 * queries; the filter's meaning (and its SQL) is the same as `InstanceRepository.list`'s, minus
 * `status` and paging.
 */
import type Database from 'better-sqlite3';
import type { InstanceFilter } from './instance-repository';
import type { Stmt } from './runtime-repository';

/** The filter {@link InstanceCountRepository.countByStatus} takes: a list filter without status and paging. */
export type InstanceCountFilter = Omit<InstanceFilter, 'status' | 'beforeId' | 'limit'>;

/** Prepared count queries; see {@link createInstanceCountRepository}. */
export type InstanceCountRepository = ReturnType<typeof createInstanceCountRepository>;

/** Prepares the count queries on `db` (statements cached per filter shape). */
export function createInstanceCountRepository(db: Database.Database) {
  const cache = new Map<string, Stmt<unknown[], { status: string; count: number }>>();
  return {
    /**
     * Instance count per status among instances matching `filter` (statuses with none are absent).
     * Times are epoch ms, inclusive; `text` matches the id, the business key or the error text.
     */
    countByStatus(filter: InstanceCountFilter = {}): Record<string, number> {
      const where: string[] = [];
      const params: unknown[] = [];
      if (filter.workflow !== undefined) {
        where.push('w.name = ?');
        params.push(filter.workflow);
      }
      if (filter.workflowVersion !== undefined) {
        where.push('w.version = ?');
        params.push(filter.workflowVersion);
      }
      if (filter.createdFrom !== undefined) {
        where.push('i.created_at >= ?');
        params.push(filter.createdFrom);
      }
      if (filter.createdTo !== undefined) {
        where.push('i.created_at <= ?');
        params.push(filter.createdTo);
      }
      if (filter.text !== undefined && filter.text !== '') {
        where.push(
          `(CAST(i.id AS TEXT) = ? OR i.business_key LIKE ? ESCAPE '\\' OR i.error_json LIKE ? ESCAPE '\\')`,
        );
        const like = `%${filter.text.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
        params.push(filter.text, like, like);
      }
      // Without a workflow filter the join is not needed: the plain GROUP BY uses the status index.
      const join = where.some((w) => w.includes('w.')) ? 'JOIN workflow w ON w.id = i.workflow_id' : '';
      const sql = `SELECT i.status AS status, count(*) AS count FROM instance i ${join}
        ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} GROUP BY i.status`;
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
