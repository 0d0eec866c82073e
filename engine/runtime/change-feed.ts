/**
 * The change feed (issue 14): every committed history event, in commit order, read by cursor
 * (the history id), and its named consumers, whose cursors live in the database.
 *
 * Delivery rule. A read answers entries with cursor > `after`; the storage backends answer only
 * up to a safe head (engine/store/port.ts `ReadModel.changes`), so resuming after any cursor
 * answered skips nothing. A consumer acknowledges a cursor once it has done what it does with the
 * entries up to it (`changes:ack`; acknowledging is monotonic). Acknowledging in the database and
 * the consumer's own output cannot be one transaction, so across a crash between the two an
 * entry is delivered again (at-least-once on the wire). What makes it exactly-once is the
 * cursor each entry carries: a consumer that records the cursor with its output (the line it
 * printed, the row it wrote in the same transaction as the data) drops an entry whose cursor is
 * at or below the last one it holds; the restart then skips nothing and repeats nothing.
 * `runnel changes --consumer` prints each line before acknowledging it, so a SIGKILL between the
 * two repeats at most that one line, with the same cursor (test/integration/runtime/change-feed-crash.test.ts).
 */
import { EngineError } from '../errors';
import type { ChangeConsumer } from '../api/contract';
import type { ChangePage, StorageBackend } from '../store/port';

/** What {@link readChanges} takes. */
export interface ReadChangesOptions {
  /** Entries with a cursor above this; default: consumer `consumer`'s cursor, else 0 (the start). */
  after?: number;
  /** At most this many entries, 1–10,000. */
  limit: number;
  /** Only entries of instances of this workflow (by name, any version). */
  workflow?: string;
  /** A registered consumer whose cursor is the default `after` (reading does not acknowledge). */
  consumer?: string;
}

/**
 * Reads one page of the change feed (see the module doc).
 *
 * @throws EngineError DATABASE_BUSY (PostgreSQL: running write transactions held the feed's lock
 *   too long; read again).
 */
export async function readChanges(storage: StorageBackend, o: ReadChangesOptions): Promise<ChangePage> {
  let after = o.after;
  if (after === undefined && o.consumer !== undefined) {
    after = (await storage.read.changeConsumers()).find((c) => c.name === o.consumer)?.cursor;
  }
  return storage.read.changes({ after: after ?? 0, limit: o.limit, ...(o.workflow === undefined ? {} : { workflow: o.workflow }) });
}

/**
 * Records that consumer `consumer` has read through `cursor` (registering it when new) and
 * answers it as stored: a cursor below its stored one leaves it unchanged.
 *
 * @throws EngineError INVALID_INPUT naming `cursor` when it is past the feed's last committed entry
 *   (a cursor the feed never answered).
 */
export async function ackChanges(storage: StorageBackend, o: { consumer: string; cursor: number; now: number }): Promise<ChangeConsumer> {
  return storage.write((q) => {
    const head = q.consumers.head();
    if (o.cursor > head) {
      throw new EngineError('INVALID_INPUT', `cursor: ${o.cursor} is past the change feed's last entry (${head})`, {
        details: { field: 'cursor', cursor: o.cursor, head },
      });
    }
    return q.consumers.ack({ name: o.consumer, cursor: o.cursor, now: o.now });
  });
}

/**
 * Unregisters consumer `consumer`: retention no longer keeps entries for it.
 *
 * @throws EngineError NOT_FOUND when no consumer has that name.
 */
export async function forgetConsumer(storage: StorageBackend, consumer: string): Promise<void> {
  const removed = await storage.write((q) => q.consumers.remove(consumer));
  if (!removed) throw new EngineError('NOT_FOUND', `consumer: no change feed consumer is named "${consumer}"`, { details: { field: 'consumer', consumer } });
}
