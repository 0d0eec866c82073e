/**
 * The status bar: transport, event-stream state (`connection-status`), a warning when the
 * database's write-ahead log is past its bound (`wal-warning`: a long reader holds it) and, in the
 * desktop app, the database file in use (`db-path`).
 */
import { useEffect, useState } from 'react';
import type { ConnectionState } from '../api/client';
import { useInstances, useStores } from '../hooks';

/** The connection's state in the bar (ConnectionBanner says the rest). */
const CONNECTION_LABELS: Record<ConnectionState, string> = {
  connecting: 'connecting',
  open: 'live',
  reconnecting: 'reconnecting',
  unauthorized: 'token refused',
  'no-token': 'no token',
};

/** How often the bar asks how the database is doing, ms. */
const WAL_POLL_MS = 10_000;

const mib = (bytes: number): string => (bytes / (1024 * 1024)).toFixed(bytes >= 10 * 1024 * 1024 ? 0 : 1);

/** The bottom bar. */
export function StatusBar() {
  const { api } = useStores();
  const [connection, setConnection] = useState<ConnectionState>('connecting');
  const [dbPath, setDbPath] = useState<string | undefined>(undefined);
  const counts = useInstances((s) => s.counts);
  const [wal, setWal] = useState<{ bytes: number; limitBytes: number } | undefined>(undefined);
  useEffect(() => api.onConnection(setConnection), [api]);
  useEffect(() => {
    let live = true;
    const poll = () =>
      void api.invoke('storage:health').then((r) => {
        if (live && r.ok) setWal(r.value.wal);
      });
    poll();
    const timer = setInterval(poll, WAL_POLL_MS);
    const off = api.onResync(poll);
    return () => {
      live = false;
      clearInterval(timer);
      off();
    };
  }, [api]);
  useEffect(() => {
    if (!api.desktop) return;
    let live = true;
    const refresh = () =>
      void api.desktop?.('app:info').then((r) => {
        if (live && r.ok) setDbPath(r.value.dbPath);
      });
    refresh();
    const off = api.onResync(refresh);
    return () => {
      live = false;
      off();
    };
  }, [api]);
  const running = (counts.RUNNING ?? 0) + (counts.PENDING ?? 0);
  // As the status chips count them: SUSPENDED apart from WAITING.
  const waiting = counts.WAITING ?? 0;
  const suspended = counts.SUSPENDED ?? 0;
  return (
    <footer className="status-bar">
      <span data-testid="connection-status" data-state={connection} className={`connection ${connection}`}>
        {api.transport === 'electron' ? 'Desktop' : 'Browser'} · {CONNECTION_LABELS[connection]}
      </span>
      <span data-testid="status-counts">
        {running} running · {waiting} waiting · {suspended} suspended · {counts.COMPLETED ?? 0} completed · {counts.FAILED ?? 0} failed
      </span>
      {wal !== undefined && wal.bytes > wal.limitBytes ? (
        <span
          className="wal-warning"
          data-testid="wal-warning"
          role="status"
          title="A reader holds old pages of the write-ahead log (a long read transaction, often in another process), so checkpoints cannot reset it. It shrinks back once that reader lets go."
        >
          WAL {mib(wal.bytes)} MiB, above its {mib(wal.limitBytes)} MiB bound: a long reader holds it
        </span>
      ) : null}
      {dbPath !== undefined ? (
        <span className="db-path" data-testid="db-path" title={dbPath}>
          {dbPath}
        </span>
      ) : null}
    </footer>
  );
}
