/**
 * File → Connect to PostgreSQL… (desktop app): asks for a connection URL and moves the app onto
 * it through `app:openDatabase` (`connect-database-dialog`, its field `connect-database-url`).
 * The engine restarts there; on failure the app stays on the database it had and the error is
 * shown as every failed call's is (a toast with its code), the dialog kept open to fix the URL.
 * Outside the desktop app there is no such command, so nothing is shown.
 */
import { useEffect, useState, type FormEvent } from 'react';
import { Modal } from '../designer/Modal';
import { useStores } from '../hooks';

/** Listens for the `database.connect` menu command and shows the dialog. */
export function ConnectDatabase() {
  const { api } = useStores();
  const [open, setOpen] = useState(false);
  const [url, setUrl] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => api.onCommand((command) => command === 'database.connect' && setOpen(true)), [api]);
  if (!open || !api.desktop) return null;
  const desktop = api.desktop;
  const valid = /^postgres(ql)?:\/\/\S+$/i.test(url.trim());
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    if (!valid || busy) return;
    setBusy(true);
    const r = await desktop('app:openDatabase', { location: url.trim() });
    setBusy(false);
    if (r.ok) {
      setOpen(false);
      setUrl('');
    }
  };
  return (
    <Modal title="Connect to PostgreSQL" testId="connect-database-dialog" onClose={() => !busy && setOpen(false)}>
      <form onSubmit={(e) => void submit(e)}>
        <label className="rn-field-label" htmlFor="connect-database-url">
          Connection URL
        </label>
        <input
          id="connect-database-url"
          data-testid="connect-database-url"
          type="text"
          autoFocus
          spellCheck={false}
          placeholder="postgres://user@host:5432/runnel"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
        />
        <p className="rn-field-hint">
          The app's engine moves onto this database (its schema is created when new). A password can stay out of the URL: the driver reads PGPASSWORD and
          ~/.pgpass. The app remembers the URL for its next start.
        </p>
        <div className="rn-modal-actions">
          <button type="button" onClick={() => setOpen(false)} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={!valid || busy} data-testid="connect-database-submit">
            {busy ? 'Connecting…' : 'Connect'}
          </button>
        </div>
      </form>
    </Modal>
  );
}
