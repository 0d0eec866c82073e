/**
 * SQL statements per transition: every statement better-sqlite3 runs is counted (reads and
 * writes apart) while an engine drains a workflow, so the bench prints what a transition costs in
 * statements beside what it costs in time (issue 10: "the bench prints the SQL statements per
 * transition"; the raw pattern runs 3 per step).
 *
 * Installed in the child process before the engine opens: the wrapper sees every statement the
 * engine prepares. It adds a counter increment per call, so the run that counts is not one that
 * is timed.
 */
import Database from 'better-sqlite3';

/** Statements run, by kind. */
export interface StatementCounts {
  reads: number;
  writes: number;
  /** The most frequent statements: the first 60 characters of their SQL, and their counts. */
  top: { sql: string; calls: number }[];
}

const counts = new Map<string, number>();
let installed = false;

/** Wraps `Database.prototype.prepare` so every statement run is counted (idempotent). */
export function countStatements(): void {
  if (installed) return;
  installed = true;
  const proto = Database.prototype as unknown as { prepare: (sql: string) => Database.Statement };
  const prepare = proto.prepare;
  proto.prepare = function (this: Database.Database, sql: string) {
    const stmt = prepare.call(this, sql);
    const key = sql.replace(/\s+/g, ' ').trim();
    for (const m of ['run', 'get', 'all', 'iterate'] as const) {
      const orig = (stmt[m] as (...a: unknown[]) => unknown).bind(stmt);
      (stmt as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => {
        counts.set(key, (counts.get(key) ?? 0) + 1);
        return orig(...args);
      };
    }
    return stmt;
  };
}

/** Forgets what was counted so far. */
export function resetStatementCounts(): void {
  counts.clear();
}

/** What was counted since the last reset. */
export function statementCounts(): StatementCounts {
  let reads = 0;
  let writes = 0;
  for (const [sql, n] of counts) {
    if (/^(SELECT|PRAGMA|WITH)\b/i.test(sql) && !/\bRETURNING\b/i.test(sql)) reads += n;
    else writes += n;
  }
  const top = [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12)
    .map(([sql, calls]) => ({ sql: sql.slice(0, 60), calls }));
  return { reads, writes, top };
}
