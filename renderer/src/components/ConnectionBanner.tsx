/**
 * What the page says when the host cannot be used — once, in one place, instead of a toast per
 * failed call (the client reports none for connection failures):
 *
 * - the host cannot be reached (`reconnecting`): a banner above the view saying since when the
 *   data shown is old and that the page reconnects by itself; when it has, a short "reconnected"
 *   line (the stores have reloaded by then);
 * - the host refuses the page's token (`unauthorized`: `runnel serve` restarted with a new one) or
 *   the page has none (`no-token`): a screen over the whole app, since nothing it shows can be
 *   trusted, saying what happened and how to get back in: open the URL `runnel serve` printed (a
 *   tab opened on it brings this one back too), or paste it here.
 *
 * Always renders its slot (a row of the app's grid), empty while connected. Test ids:
 * `connection-banner` (`data-state`), `connection-screen` (`data-state`), `connection-token`,
 * `connection-connect`, `connection-reconnected`.
 */
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { PROBE_INTERVAL_MS, type ConnectionState } from '../api/client';
import { useStores } from '../hooks';

/** How long "reconnected" stays, ms. */
const RECONNECTED_MS = 5000;

/** The token in what was pasted: a URL with `?token=`, or the token itself. */
export function tokenFromPaste(text: string): string | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  if (/^https?:\/\//i.test(t)) {
    try {
      return new URL(t).searchParams.get('token') ?? undefined;
    } catch {
      return undefined;
    }
  }
  return /^[A-Za-z0-9_-]+$/.test(t) ? t : undefined;
}

const clock = (ms: number): string => new Date(ms).toLocaleTimeString();

function TokenScreen({ state }: { state: 'unauthorized' | 'no-token' }) {
  const { api } = useStores();
  const [text, setText] = useState('');
  const [note, setNote] = useState<string | undefined>(undefined);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    return () => clearTimeout(timer.current);
  }, []);
  const origin = window.location.origin;
  const submit = (e: FormEvent): void => {
    e.preventDefault();
    const token = tokenFromPaste(text);
    if (token === undefined) {
      setNote('Paste the whole URL that runnel serve printed (it ends in ?token=…), or the token alone.');
      return;
    }
    setNote('Trying…');
    api.setToken?.(token);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setNote(`The host did not accept that token either (${clock(Date.now())}). Is it the URL of the runnel serve running now?`), 2500);
  };
  return (
    <div className="connection-screen" role="alertdialog" aria-modal="true" aria-labelledby="connection-title" data-testid="connection-screen" data-state={state}>
      <div className="connection-card">
        <h2 id="connection-title">{state === 'no-token' ? 'This tab has no key to the Runnel host' : 'The Runnel host no longer accepts this tab'}</h2>
        {state === 'no-token' ? (
          <p>
            The page was opened without the API token that <code>runnel serve</code> prints with its address. Until it has one it can show
            nothing: an empty list behind this message does not mean an empty database.
          </p>
        ) : (
          <p>
            The host at <code>{origin}</code> refused this tab&apos;s API token. That happens when <code>runnel serve</code> was restarted: each run makes a new
            token, and the old one stops working. Nothing shown behind this message is current.
          </p>
        )}
        <p>
          <strong>To get back in</strong>, open the URL that <code>runnel serve</code> printed in its terminal when it started, such as{' '}
          <code>{origin}/?token=…</code> (<code>npm run web</code> opens it for you). Opened in another tab, it brings this tab back by itself, at the same
          place.
        </p>
        <form className="connection-form" onSubmit={submit}>
          <label htmlFor="connection-token">Or paste that URL here:</label>
          <div className="connection-form-row">
            <input
              id="connection-token"
              ref={input}
              data-testid="connection-token"
              type="text"
              spellCheck={false}
              autoComplete="off"
              placeholder={`${origin}/?token=…`}
              value={text}
              onChange={(e) => setText(e.target.value)}
            />
            <button type="submit" className="primary" data-testid="connection-connect">
              Connect
            </button>
          </div>
          {note !== undefined ? (
            <p className="connection-note" role="status">
              {note}
            </p>
          ) : null}
        </form>
        <p className="muted">This tab keeps checking every few seconds, and picks up a new token as soon as any tab of this host has one.</p>
      </div>
    </div>
  );
}

/** The connection's banner slot; see the module comment. */
export function ConnectionBanner() {
  const { api } = useStores();
  const [state, setState] = useState<ConnectionState>('connecting');
  const [since, setSince] = useState<number | undefined>(undefined);
  const [recovered, setRecovered] = useState(false);
  const last = useRef<ConnectionState>('connecting');
  useEffect(
    () =>
      api.onConnection((next) => {
        const prev = last.current;
        last.current = next;
        setState(next);
        if (next === 'open' || next === 'connecting') {
          setSince(undefined);
          if (next === 'open' && prev !== 'open' && prev !== 'connecting') setRecovered(true);
        } else {
          setRecovered(false);
          setSince((s) => s ?? Date.now());
        }
      }),
    [api],
  );
  useEffect(() => {
    if (!recovered) return;
    const t = setTimeout(() => setRecovered(false), RECONNECTED_MS);
    return () => clearTimeout(t);
  }, [recovered]);
  return (
    <div className="connection-slot">
      {state === 'reconnecting' ? (
        <div className="connection-banner" role="alert" data-testid="connection-banner" data-state={state}>
          <strong>Lost contact with the Runnel host.</strong>{' '}
          <span>
            Retrying every {PROBE_INTERVAL_MS.unreachable / 1000} s; what is shown is from {since === undefined ? 'before' : clock(since)}.
            {api.transport === 'http' ? (
              <>
                {' '}
                If <code>runnel serve</code> was restarted and printed a new URL, open that one.
              </>
            ) : null}
          </span>
        </div>
      ) : null}
      {recovered && state === 'open' ? (
        <div className="connection-banner recovered" role="status" data-testid="connection-reconnected">
          Reconnected to the Runnel host: what is shown is reloaded.
        </div>
      ) : null}
      {state === 'unauthorized' || state === 'no-token' ? <TokenScreen state={state} /> : null}
    </div>
  );
}
