/**
 * PostgreSQL: the change feed's read (history by id across instances), safe although history ids
 * are identity values taken at insert by transactions that commit in any order.
 *
 * The hazard: transaction A takes id 10, transaction B takes id 11 and commits first; a reader
 * that then answers 11 and resumes after it never sees 10. The rule here is a commit-ordered
 * high-water mark taken under a lock (the safe point):
 * - every write transaction of the storage port takes {@link FEED_LOCK_KEY} in SHARE mode as its
 *   first statement (sent with its BEGIN, no extra round trip: ./storage.ts), before any history
 *   id is drawn, and holds it to its end;
 * - a feed read takes the same key EXCLUSIVE in a transaction of its own, which waits until every
 *   write transaction running at that moment has ended (new ones queue behind it), reads
 *   `max(history.id)` as the head, and lets go at once. At that instant no transaction holding an
 *   undrawn or uncommitted id exists, so every id at or below the head is final (committed, or
 *   rolled back: a gap). The entries are then read with `id <= head` without the lock. The head is
 *   the identity sequence's last value ({@link POSTGRES_HEAD}), so it never goes back when the
 *   newest rows are deleted.
 * Writers wait at most for the lock, max and commit of one read (a few ms); a read waits for the
 * write transactions running when it starts, up to {@link FEED_LOCK_TIMEOUT_MS} (the storage's
 * `feedWaitMs`), then fails DATABASE_BUSY (retryable).
 *
 * Peers: the transactional outbox read by `xid8` (`WHERE xid < pg_snapshot_xmin(pg_current_snapshot())`,
 * ordered by xid) orders the feed by transaction id rather than by history id, so a cursor would
 * be a pair (xid, id) and history's id would not serve; a high-water mark that waits a while for
 * gaps (Marten's async daemon) can skip an entry whose transaction outlives the wait. The lock
 * keeps the cursor (the history id) exact.
 */
import type pg from 'pg';
import { EngineError } from '../../errors';
import type { ChangePage, ReadModel } from '../../store/port';
import { CHANGE_SELECT, toChangeConsumer, toChangePage, type ChangeRow, type ConsumerRow } from '../queries/changes';
import { rowsOf } from './pg-read';

/**
 * The change feed's lock (the single-bigint advisory key space, apart from the two-int keys of
 * instance and workflow locks and from migrations' key): 0x52554E4E4646, "RUNNFF".
 */
export const FEED_LOCK_KEY = 0x52554e4e4646;

/** What every write transaction sends first: BEGIN and the feed's lock in SHARE mode (see the module doc). */
export const WRITE_BEGIN_SQL = `BEGIN; SELECT pg_advisory_xact_lock_shared(${FEED_LOCK_KEY})`;

/**
 * The highest history id handed out: the identity sequence's last value (which never goes back,
 * so deleting the newest rows moves no head), or `max(id)` when it is higher (a sequence that
 * `runnel copy` set to the next value is "not called" yet). Safe only under the feed's lock
 * (see the module doc); inside a write transaction it may count ids that are not committed yet.
 */
export const POSTGRES_HEAD = `SELECT greatest(
    coalesce(pg_sequence_last_value(pg_get_serial_sequence('history', 'id')::regclass), 0),
    coalesce((SELECT max(id) FROM history), 0))::int8 AS head`;

/** How long a feed read waits for the write transactions running when it starts, ms, by default. */
export const FEED_LOCK_TIMEOUT_MS = 2000;

/**
 * The feed's safe head on `client` (see the module doc): the highest history id below which no
 * transaction can still commit.
 *
 * The lock, the head and the commit go as one query text (one round trip), so that the server
 * lets go of the lock without waiting for this process. Sent statement by statement, a read
 * granted the lock waited for this thread to send its next statement, while this thread could be
 * blocked in a write transaction of its own storage (its statements run synchronously on the
 * bridge thread: ./bridge.ts) whose first statement waited for that lock: neither moved until a
 * lock timeout, seconds of stalled writes in a host serving the change stream.
 *
 * @param waitMs how long to wait for the write transactions running now, ms.
 * @throws EngineError DATABASE_BUSY when write transactions held the lock past `waitMs`.
 */
export async function safeHead(client: pg.ClientBase, waitMs = FEED_LOCK_TIMEOUT_MS): Promise<number> {
  const text = `BEGIN; SET LOCAL lock_timeout = ${Math.max(1, Math.floor(waitMs))}; SELECT pg_advisory_xact_lock(${FEED_LOCK_KEY}); ${POSTGRES_HEAD}; COMMIT`;
  try {
    // A multi-statement text answers one result per statement: the head is the fourth.
    const results = (await client.query(text)) as unknown as pg.QueryResult<{ head: number | string }>[];
    const head = results[3]?.rows[0]?.head;
    return head === undefined ? 0 : Number(head);
  } catch (err) {
    // A failed statement leaves the rest of the text unrun and the transaction open, aborted.
    await client.query('ROLLBACK').catch(() => undefined);
    if ((err as { code?: string }).code === '55P03') {
      throw new EngineError('DATABASE_BUSY', `the change feed waited ${waitMs} ms for running write transactions; read again`, {
        cause: err,
      });
    }
    throw err;
  }
}

/** The feed's reads over `pool` (part of the read model); `waitMs` as {@link safeHead} takes it. */
export function createPostgresChangeReads(pool: pg.Pool, waitMs = FEED_LOCK_TIMEOUT_MS): Pick<ReadModel, 'changes' | 'changeConsumers'> {
  return {
    changes: async (o): Promise<ChangePage> => {
      const client = await pool.connect();
      let head: number;
      try {
        head = await safeHead(client, waitMs);
      } finally {
        client.release();
      }
      const rows =
        o.workflow === undefined
          ? await rowsOf<ChangeRow>(pool, `SELECT ${CHANGE_SELECT.postgres.columns} WHERE h.id > $1 AND h.id <= $2 ORDER BY h.id LIMIT $3`, [o.after, head, o.limit])
          : await rowsOf<ChangeRow>(pool, `SELECT ${CHANGE_SELECT.postgres.columns} WHERE h.id > $1 AND h.id <= $2 AND ${CHANGE_SELECT.postgres.workflow} = $3 ORDER BY h.id LIMIT $4`, [
              o.after,
              head,
              o.workflow,
              o.limit,
            ]);
      return toChangePage(rows, o, head);
    },
    changeConsumers: async () =>
      (await rowsOf<ConsumerRow>(pool, 'SELECT name, cursor, created_at, updated_at FROM change_consumer ORDER BY name COLLATE "C"')).map(toChangeConsumer),
  };
}
