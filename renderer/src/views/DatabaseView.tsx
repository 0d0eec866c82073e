/**
 * The Database view (issue 14): the file and its WAL, pages free, the checkpoints run, instances
 * by age, the retention policy in force and the change-feed consumers it waits for
 * (`database:info`, refreshed every 5 s while shown), and the upkeep a person starts from here:
 * a backup to a path on the host's machine, a check, and giving free pages back — each with its
 * progress (`operation.progress` events) and its outcome on the card.
 *
 * On PostgreSQL the file's card says so, and the three actions are not offered (the host refuses
 * them: the server has its own tools).
 *
 * Test ids: `view-database`, `db-location`, `db-backend`, `db-file-bytes`, `db-wal-bytes`,
 * `db-free-pages` (`data-count`), `db-auto-vacuum`, `db-checkpoints`, `db-age-<day|week|month|older>`
 * (`data-live`, `data-ended`), `db-retention`, `db-retention-<workflow>`, `db-consumers`,
 * `db-backup-dest`, `db-backup-force`, `db-backup`, `db-check`, `db-vacuum`,
 * `db-progress-<backup|vacuum>` (a `progress` element), `db-result-<backup|check|vacuum>`
 * (`data-ok`), `db-violation-<n>`.
 */
import '../monitor/monitor.css';
import { useCallback, useEffect, useState } from 'react';
import type { Output } from '../../../engine/api/contract';
import { useStores } from '../hooks';
import { formatBytes, formatCount, formatDuration } from '../monitor/format';

type Info = Output<'database:info'>;
type Operation = 'backup' | 'check' | 'vacuum';
type Progress = { done: number; total: number; unit: 'bytes' | 'pages' };
type Outcome = { ok: boolean; text: string; violations?: string[] };


const AGE_LABELS: Record<Info['ages'][number]['age'], string> = {
  day: 'under a day',
  week: '1–7 days',
  month: '7–30 days',
  older: 'over 30 days',
};

const days = (d: number | null): string => (d === null ? 'for ever' : `${d} day${d === 1 ? '' : 's'}`);
const policyText = (p: Info['retention']['defaults']): string => `completed ${days(p.completedDays)}, failed ${days(p.failedDays)}, cancelled ${days(p.cancelledDays)}`;

/** See the module comment. */
export function DatabaseView() {
  const { api, ui } = useStores();
  const [info, setInfo] = useState<Info | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [running, setRunning] = useState<Operation | undefined>();
  const [progress, setProgress] = useState<Partial<Record<'backup' | 'vacuum', Progress>>>({});
  const [outcomes, setOutcomes] = useState<Partial<Record<Operation, Outcome>>>({});
  const [dest, setDest] = useState('');
  const [force, setForce] = useState(false);

  const load = useCallback(async () => {
    const r = await api.invoke('database:info');
    if (r.ok) {
      setInfo(r.value);
      setLoadError(undefined);
    } else setLoadError(`${r.error.code}: ${r.error.message}`);
  }, [api]);

  useEffect(() => {
    void load();
    const t = setInterval(() => void load(), 5000);
    // Reloaded at once when the host is usable again (back, or a token given), not at the next poll.
    const off = api.onResync(() => void load());
    return () => {
      clearInterval(t);
      off();
    };
  }, [load, api]);

  useEffect(
    () =>
      api.onEvent((batch) => {
        for (const e of batch.events) {
          if (e.type === 'operation.progress') setProgress((p) => ({ ...p, [e.operation]: { done: e.done, total: e.total, unit: e.unit } }));
        }
      }),
    [api],
  );

  const run = async (op: Operation): Promise<void> => {
    setRunning(op);
    setOutcomes((o) => ({ ...o, [op]: undefined }));
    if (op !== 'check') setProgress((p) => ({ ...p, [op]: undefined }));
    try {
      if (op === 'backup') {
        const r = await api.invoke('database:backup', { dest, force });
        // The refusal is shown on the card, once: not as a toast too.
        if (!r.ok) ui.getState().claimToast('database:backup');
        setOutcomes((o) => ({
          ...o,
          backup: r.ok ? { ok: true, text: `Backed up to ${r.value.dest}: ${formatBytes(r.value.bytes)} in ${formatDuration(r.value.elapsedMs)}` } : { ok: false, text: r.error.message },
        }));
      } else if (op === 'check') {
        const r = await api.invoke('database:check');
        if (!r.ok) ui.getState().claimToast('database:check');
        setOutcomes((o) => ({
          ...o,
          check: r.ok
            ? {
                ok: r.value.ok,
                text: r.value.ok
                  ? `No problem found: ${formatCount(r.value.counts.instances)} instances, ${formatCount(r.value.counts.history)} history rows (${formatDuration(r.value.elapsedMs)})`
                  : `${r.value.violations.length} problem${r.value.violations.length === 1 ? '' : 's'} found`,
                violations: r.value.violations.map((v) => `${v.kind}: ${v.message}`),
              }
            : { ok: false, text: r.error.message },
        }));
      } else {
        const r = await api.invoke('database:vacuum');
        if (!r.ok) ui.getState().claimToast('database:vacuum');
        setOutcomes((o) => ({
          ...o,
          vacuum: r.ok
            ? { ok: true, text: `${formatCount(r.value.pagesFreed)} pages given back: ${formatBytes(r.value.bytesBefore)} → ${formatBytes(r.value.bytesAfter)}` }
            : { ok: false, text: r.error.message },
        }));
      }
    } finally {
      setRunning(undefined);
      void load();
    }
  };

  const file = info?.file;
  const sqlite = info?.backend === 'sqlite';
  const bar = (op: 'backup' | 'vacuum') => {
    const p = progress[op];
    if (!p || (running !== op && outcomes[op] === undefined)) return null;
    const show = (n: number) => (p.unit === 'bytes' ? formatBytes(n) : `${formatCount(n)} pages`);
    return (
      <div className="db-progress">
        <progress data-testid={`db-progress-${op}`} max={Math.max(1, p.total)} value={Math.min(p.done, p.total)} aria-label={`${op} progress`} />
        <span className="muted">
          {show(p.done)} of {p.unit === 'bytes' ? 'about ' : ''}
          {show(p.total)}
        </span>
      </div>
    );
  };
  const result = (op: Operation) => {
    const o = outcomes[op];
    if (!o) return null;
    return (
      <div className={o.ok ? 'db-result ok' : 'db-result bad'} data-testid={`db-result-${op}`} data-ok={o.ok} role="status">
        <span>{o.text}</span>
        {o.violations && o.violations.length > 0 ? (
          <ul>
            {o.violations.map((v, i) => (
              <li key={i} data-testid={`db-violation-${i}`}>
                {v}
              </li>
            ))}
          </ul>
        ) : null}
      </div>
    );
  };

  return (
    <div className="view database-view monitor-view" data-testid="view-database">
      <div className="monitor-head">
        <h2>Database</h2>
        <span className="muted" data-testid="db-location" title={info?.location}>
          {info?.location ?? '…'}
        </span>
        <span className="spacer" />
        <span className="badge" data-testid="db-backend">
          {info?.backend === 'postgres' ? 'PostgreSQL' : info ? 'SQLite' : ''}
        </span>
      </div>
      {loadError ? (
        <p className="db-result bad" role="alert">
          {loadError}
        </p>
      ) : null}

      <div className="dash-grid">
        <section className="card" aria-label="File">
          <header>
            <h3>File</h3>
          </header>
          {file ? (
            <dl className="db-facts">
              <dt>Size</dt>
              <dd data-testid="db-file-bytes">{formatBytes(file.bytes)}</dd>
              <dt>Write-ahead log</dt>
              <dd data-testid="db-wal-bytes">
                {formatBytes(file.walBytes)}
                {info?.health.wal ? <span className="muted"> (kept under {formatBytes(info.health.wal.limitBytes)})</span> : null}
              </dd>
              <dt>Pages</dt>
              <dd>
                {formatCount(file.pageCount)} × {formatBytes(file.pageSize)}
              </dd>
              <dt>Pages free</dt>
              <dd data-testid="db-free-pages" data-count={file.freePages}>
                {formatCount(file.freePages)} ({formatBytes(file.freePages * file.pageSize)})
              </dd>
              <dt>auto_vacuum</dt>
              <dd data-testid="db-auto-vacuum">{file.autoVacuum}</dd>
              <dt>Checkpoints</dt>
              <dd data-testid="db-checkpoints">
                {info?.health.checkpoints
                  ? `${formatCount(info.health.checkpoints.count)} by this process, the last took ${formatDuration(info.health.checkpoints.lastMs)}`
                  : 'none by this process yet'}
              </dd>
            </dl>
          ) : (
            <p className="muted">{info ? 'A PostgreSQL database: its server keeps the files (pg_dump, autovacuum, pg_amcheck).' : 'Loading…'}</p>
          )}
        </section>

        <section className="card" aria-label="Instances by age">
          <header>
            <h3>Instances by age</h3>
            <span className="muted">live since created, ended since they ended</span>
          </header>
          <table className="db-ages">
            <thead>
              <tr>
                <th scope="col">age</th>
                <th scope="col">live</th>
                <th scope="col">ended</th>
              </tr>
            </thead>
            <tbody>
              {(info?.ages ?? []).map((a) => (
                <tr key={a.age} data-testid={`db-age-${a.age}`} data-live={a.live} data-ended={a.ended}>
                  <th scope="row">{AGE_LABELS[a.age]}</th>
                  <td>{formatCount(a.live)}</td>
                  <td>{formatCount(a.ended)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>

        <section className="card" aria-label="Retention">
          <header>
            <h3>Retention</h3>
          </header>
          {info ? (
            <>
              <p data-testid="db-retention">{info.retention.enabled ? `Ended instances are deleted after: ${policyText(info.retention.defaults)}.` : 'Off in this host (--no-retention): nothing is deleted by itself.'}</p>
              {info.retention.workflows.length > 0 ? (
                <ul className="db-policies">
                  {info.retention.workflows.map((w) => (
                    <li key={w.name} data-testid={`db-retention-${w.name}`}>
                      <strong>{w.name}</strong>: {policyText(w.policy)}
                    </li>
                  ))}
                </ul>
              ) : null}
              <p className="muted" data-testid="db-consumers">
                {info.consumers.count === 0
                  ? 'No change-feed consumer is registered.'
                  : `${info.consumers.count} change-feed consumer${info.consumers.count === 1 ? '' : 's'}: history after entry ${formatCount(info.consumers.lowestCursor ?? 0)} is kept until read.`}
              </p>
            </>
          ) : null}
        </section>

        <section className="card" aria-label="Upkeep">
          <header>
            <h3>Upkeep</h3>
          </header>
          {sqlite ? (
            <div className="db-actions">
              <form
                className="db-backup"
                onSubmit={(e) => {
                  e.preventDefault();
                  void run('backup');
                }}
              >
                <label>
                  Back up to
                  <input data-testid="db-backup-dest" value={dest} onChange={(e) => setDest(e.target.value)} placeholder="/path/on/the/host/backup.db" aria-label="Backup file path on the host" />
                </label>
                <label className="inline">
                  <input type="checkbox" data-testid="db-backup-force" checked={force} onChange={(e) => setForce(e.target.checked)} /> replace it if it exists
                </label>
                <button type="submit" data-testid="db-backup" disabled={running !== undefined || dest.trim() === ''}>
                  Back up
                </button>
              </form>
              {bar('backup')}
              {result('backup')}
              <div className="db-action">
                <button type="button" data-testid="db-check" disabled={running !== undefined} onClick={() => void run('check')}>
                  {running === 'check' ? 'Checking…' : 'Check the file'}
                </button>
                <span className="muted">SQLite&apos;s integrity check and the engine&apos;s own rules; the worker waits while it runs.</span>
              </div>
              {result('check')}
              <div className="db-action">
                <button type="button" data-testid="db-vacuum" disabled={running !== undefined} onClick={() => void run('vacuum')}>
                  Give free pages back
                </button>
                <span className="muted">{file && file.autoVacuum !== 'incremental' ? 'This file must be converted first: close the app and run npx runnel vacuum.' : 'Shrinks the file by its free pages, a thousand at a time.'}</span>
              </div>
              {bar('vacuum')}
              {result('vacuum')}
            </div>
          ) : (
            <p className="muted">{info ? 'Backups, checks and vacuum are the PostgreSQL server’s own.' : ''}</p>
          )}
        </section>
      </div>
    </div>
  );
}
