/**
 * PostgreSQL: the change feed's named consumers in a write transaction ({@link ConsumerQueries}),
 * the statements of engine/db/queries/changes.ts translated.
 */
import type { ConsumerQueries } from '../../../store/port';
import { toChangeConsumer, type ConsumerRow } from '../../queries/changes';
import { POSTGRES_HEAD } from '../changes';
import type { PgTx } from './context';

const GET = 'SELECT name, cursor, created_at, updated_at FROM change_consumer WHERE name = $1';
const ACK = `INSERT INTO change_consumer (name, cursor, created_at, updated_at) VALUES ($1, $2, $3, $3)
  ON CONFLICT (name) DO UPDATE SET cursor = greatest(change_consumer.cursor, excluded.cursor), updated_at = excluded.updated_at
  RETURNING name, cursor, created_at, updated_at`;
const REMOVE = 'DELETE FROM change_consumer WHERE name = $1';
const LOWEST = 'SELECT min(cursor) AS lowest FROM change_consumer';

/** {@link ConsumerQueries} over the transaction `tx`. */
export function createConsumerQueries(tx: PgTx): ConsumerQueries {
  return {
    get: (name) => {
      const r = tx.run<ConsumerRow>(GET, [name]).rows[0];
      return r === undefined ? undefined : toChangeConsumer(r);
    },
    ack: ({ name, cursor, now }) => toChangeConsumer(tx.run<ConsumerRow>(ACK, [name, cursor, now]).rows[0] as ConsumerRow),
    remove: (name) => tx.run(REMOVE, [name]).rowCount > 0,
    lowestConsumerCursor: () => tx.run<{ lowest: number | null }>(LOWEST, []).rows[0]?.lowest ?? undefined,
    // The highest id drawn, committed or not: `changes:ack` refuses only cursors never drawn.
    head: () => tx.run<{ head: number }>(POSTGRES_HEAD, []).rows[0]?.head ?? 0,
  };
}
