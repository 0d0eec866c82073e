/**
 * The status bar: transport, event-stream state (`connection-status`) and, in the desktop app,
 * the database file in use (`db-path`).
 */
import { useEffect, useState } from 'react';
import type { ConnectionState } from '../api/client';
import { useInstances, useStores } from '../hooks';

/** The bottom bar. */
export function StatusBar() {
  const { api } = useStores();
  const [connection, setConnection] = useState<ConnectionState>('connecting');
  const [dbPath, setDbPath] = useState<string | undefined>(undefined);
  const counts = useInstances((s) => s.counts);
  useEffect(() => api.onConnection(setConnection), [api]);
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
        {api.transport === 'electron' ? 'Desktop' : 'Browser'} · {connection === 'open' ? 'live' : connection}
      </span>
      <span data-testid="status-counts">
        {running} running · {waiting} waiting · {suspended} suspended · {counts.COMPLETED ?? 0} completed · {counts.FAILED ?? 0} failed
      </span>
      {dbPath !== undefined ? (
        <span className="db-path" data-testid="db-path" title={dbPath}>
          {dbPath}
        </span>
      ) : null}
    </footer>
  );
}
