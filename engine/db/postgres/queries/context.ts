/**
 * PostgreSQL: what every query family runs on inside one write transaction — the statement
 * runner, and the locks that give each instance SQLite's one-writer-at-a-time.
 *
 * SQLite serializes every writer (BEGIN IMMEDIATE). Here transactions run in parallel under READ
 * COMMITTED, and a transaction that touches an instance first takes that instance's advisory
 * lock (`pg_advisory_xact_lock`, held until it ends), once per transaction. Each READ COMMITTED
 * statement reads what was committed when it started, so every statement after the lock sees the
 * instance as the last writer left it: read-then-write inside a transition is as safe as on SQLite,
 * and transactions on different instances commit in parallel. Claims take instance locks with
 * `pg_try_advisory_xact_lock` instead (./schedule.ts `due`): an instance another transaction holds
 * is left for a later turn rather than waited for. Workflow management locks the workflow's name.
 *
 * Lock keys (the two-int form, its own key space): an instance id is split into
 * `(INSTANCE_LOCK_SPACE + id / 2^31, id mod 2^31)` (ids below 2^47 stay inside the space); a
 * workflow name is `(WORKFLOW_LOCK_SPACE, hashtext(name))`.
 */
import type { QueryResult } from '../bridge';

/** First key of instance locks (`0x52550000`, "RU"); ids above 2^31 move it up by id / 2^31. */
export const INSTANCE_LOCK_SPACE = 0x52550000;
/** First key of workflow-name locks (`0x52540000`). */
export const WORKFLOW_LOCK_SPACE = 0x52540000;

/** The two int keys of instance `$n`'s advisory lock, as SQL over a BIGINT expression `id`. */
export function instanceLockKeys(id: string): string {
  return `((${id})::bigint >> 31)::int + ${INSTANCE_LOCK_SPACE}, ((${id})::bigint & 2147483647)::int`;
}

/** What the query families of one write transaction run on (created by ../storage.ts). */
export interface PgTx {
  /**
   * Runs one statement of the transaction (prepared, `$n` parameters) and answers its rows.
   *
   * @throws PgQueryError (SQLSTATE in `code`), EngineError DATABASE_UNAVAILABLE.
   */
  run<R = Record<string, unknown>>(sql: string, params: readonly unknown[]): QueryResult<R>;
  /**
   * Runs a statement whose answer nobody reads (a void write): queued, and sent with the next
   * statement that answers (see SyncBridge.queue in ../bridge.ts); its error is thrown there.
   */
  exec(sql: string, params: readonly unknown[]): void;
  /** Takes instance `id`'s lock (waiting for a transaction that holds it), once per transaction; queued as {@link exec}. */
  lockInstance(id: number): void;
  /** Notes that this transaction holds instance `id` already (it created it, or a claim's try-lock got it). */
  holdsInstance(id: number): void;
  /** Takes the lock of workflow `name`, once per transaction. */
  lockWorkflow(name: string): void;
}
