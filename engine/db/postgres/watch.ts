/**
 * PostgreSQL: noticing commits made by other connections (`StorageBackend.watchChanges`, engine/store/port.ts).
 *
 * Every write transaction that changed something ends with `pg_notify(channel, <its backend's
 * id>)` (./storage.ts), delivered at its commit. A connection of its own LISTENs on the channel
 * and ignores this backend's own id. Where LISTEN is not available (some distributed PostgreSQL
 * variants have no NOTIFY, or the connection for it fails or drops), the watch falls back to
 * polling a signature of the database every `intervalMs` — the highest history and workflow ids
 * and the count of deleted workflow versions — which sees other processes' starts, steps and
 * deploys; this backend's own commits move it too, so the fallback may also report those.
 */
import pg from 'pg';
import { clientConfig } from './connection';

/** What {@link watchPostgresChanges} watches. */
export interface WatchTarget {
  url: string;
  /** The read pool (polling runs on it). */
  pool: pg.Pool;
  /** This backend's id: notifications carrying it are its own. */
  self: string;
  channel: string;
  /** Try LISTEN first (false: poll only). */
  listen: boolean;
}

const SIGNATURE = `SELECT (SELECT coalesce(max(id), 0) FROM history) AS h, (SELECT coalesce(max(id), 0) FROM workflow) AS w,
  (SELECT count(*) FROM workflow WHERE deleted_at IS NOT NULL) AS d`;

/**
 * Calls `onChange` after commits of other connections, at most once per `intervalMs`; returns
 * the function that stops watching (see the module doc).
 */
export function watchPostgresChanges(t: WatchTarget, onChange: () => void, intervalMs: number): () => void {
  const every = Math.max(10, intervalMs);
  let stopped = false;
  let pending = false;
  let listener: pg.Client | undefined;
  let polling = false;
  let last: string | undefined;

  const poll = async (): Promise<void> => {
    try {
      const r = await t.pool.query<{ h: number; w: number; d: number }>(SIGNATURE);
      const row = r.rows[0];
      const sig = row === undefined ? '' : `${row.h}/${row.w}/${row.d}`;
      if (last !== undefined && sig !== last) pending = true;
      last = sig;
    } catch {
      // the server away or closing: the next tick tries again
    }
  };
  const fallBack = (): void => {
    if (polling || stopped) return;
    polling = true;
    // A change missed while switching over still shows in the next signature.
    void poll();
  };

  if (t.listen) {
    const c = new pg.Client(clientConfig(t.url));
    listener = c;
    c.on('error', () => {
      listener = undefined;
      c.end().catch(() => {});
      fallBack();
    });
    c.on('notification', (n) => {
      if (n.channel === t.channel && n.payload !== t.self) pending = true;
    });
    c.connect()
      .then(() => c.query(`LISTEN ${t.channel}`))
      .catch(() => {
        if (listener === c) listener = undefined;
        c.end().catch(() => {});
        fallBack();
      });
  } else {
    fallBack();
  }

  const timer = setInterval(() => {
    if (polling) void poll();
    if (!pending || stopped) return;
    pending = false;
    onChange();
  }, every);
  timer.unref?.();
  return () => {
    stopped = true;
    clearInterval(timer);
    const c = listener;
    listener = undefined;
    c?.end().catch(() => {});
  };
}
