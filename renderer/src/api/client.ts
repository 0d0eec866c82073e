/**
 * The renderer's only way to the engine: one typed client over whichever transport the page runs
 * on, picked once at start-up.
 *
 * - Desktop app: `window.runnel` (the preload's bridge, `electron/preload/bridge.ts`) carries
 *   calls over Electron IPC, events and menu commands back.
 * - Browser host: `POST /api/<channel>` with `Authorization: Bearer <token>` and a JSON body,
 *   events from `EventSource('/api/events?token=…')`. The token comes from the page URL's
 *   `?token=` once, is kept in `sessionStorage` and `localStorage` (so a reload, and an address
 *   of the app opened in a new tab, keep working) and removed from the address bar (so it is not
 *   bookmarked or shared by accident).
 *
 * The connection's state (`onConnection`) says whether the host can be used: `reconnecting`
 * while it cannot be reached (the client probes `/api/health` and reopens the event stream as soon
 * as the host answers again, then asks every store to reload), `unauthorized` when it refuses the
 * token (it restarted: each run of `runnel serve` makes a new one), `no-token` when the page has
 * none. In the last two it keeps probing too, and takes up a token another tab of the same origin
 * stored (someone opened the new URL there) or one given by {@link ApiClient.setToken}.
 *
 * Every call resolves to a contract `Result`; nothing throws. No other renderer module touches
 * `fetch`, `EventSource` or `window.runnel` (STYLE.md: one module owns the transport).
 */
import type { Channel, EventBatch, Invoke, Result } from '../../../engine/api/contract';
import type { RunnelBridge } from '../../../electron/preload/api';
import type { DesktopInvoke } from '../../../electron/shared/desktop-contract';
import type { DesktopCommand } from '../../../electron/shared/commands';

/** Which transport a client speaks. */
export type Transport = 'electron' | 'http';

/**
 * State of the connection to the host: `connecting` (first contact), `open`, `reconnecting` (the
 * host cannot be reached; retried), `unauthorized` (the host refuses this page's token),
 * `no-token` (the page has none). The desktop app is always `open`.
 */
export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'unauthorized' | 'no-token';

/** The typed API every store and view uses. */
export interface ApiClient {
  readonly transport: Transport;
  /** Calls a contract channel; never rejects. */
  readonly invoke: Invoke;
  /** Calls a desktop-only channel (native dialogs); undefined outside the desktop app. */
  readonly desktop: DesktopInvoke | undefined;
  /** Subscribes to event batches; returns the unsubscriber. */
  onEvent(listener: (batch: EventBatch) => void): () => void;
  /** Subscribes to app-menu commands (desktop only; never fires in a browser). */
  onCommand(listener: (command: DesktopCommand) => void): () => void;
  /**
   * Subscribes to "events may have been missed": the stream reconnected, a batch number was
   * skipped, or the database changed. Listeners reload what they show.
   */
  onResync(listener: () => void): () => void;
  /** Subscribes to the connection's state (called at once with the current one). */
  onConnection(listener: (state: ConnectionState) => void): () => void;
  /**
   * Uses another token (the browser host's, pasted from the URL `runnel serve` printed): kept
   * for this origin and tried at once. The desktop app has none.
   */
  setToken?(token: string): void;
  /** Closes the event stream. */
  close(): void;
}

/** A tiny listener set. */
class Listeners<T> {
  private readonly set = new Set<(value: T) => void>();
  add(listener: (value: T) => void): () => void {
    this.set.add(listener);
    return () => void this.set.delete(listener);
  }
  emit(value: T): void {
    for (const l of [...this.set]) {
      try {
        l(value);
      } catch (error) {
        console.error('runnel: a listener threw', error);
      }
    }
  }
  get size(): number {
    return this.set.size;
  }
}

/** A failed Result built here (the client's own codes: NETWORK_ERROR, and the host's by status). */
function failure(code: string, message: string, details?: unknown): { ok: false; error: { code: string; message: string; details?: unknown } } {
  return { ok: false, error: details === undefined ? { code, message } : { code, message, details } };
}

function isResult(value: unknown): value is Result<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as { ok?: unknown; error?: { code?: unknown; message?: unknown } | null };
  if (r.ok === true) return 'value' in r;
  return r.ok === false && typeof r.error === 'object' && r.error !== null && typeof r.error.code === 'string' && typeof r.error.message === 'string';
}

/** Watches batch numbers: a gap means events were lost. */
function seqTracker(onGap: () => void): (batch: EventBatch) => void {
  let last: number | undefined;
  return (batch) => {
    if (last !== undefined && batch.seq !== last + 1) onGap();
    last = batch.seq;
  };
}

/** Where the browser host's token is kept between pages (see {@link browserTokenStore}). */
export interface TokenStore {
  /** The token kept for this origin (the newest any tab stored), or undefined. */
  read(): string | undefined;
  save(token: string): void;
}

/** How often the client asks a host it cannot use whether it can again, ms. */
export const PROBE_INTERVAL_MS = { unreachable: 2000, refused: 3000 } as const;

/** Options of {@link createHttpClient}. */
export interface HttpClientOptions {
  /** The browser host's per-run token ('' when the page has none). */
  token: string;
  /** Where tokens are kept: a new one is saved there, and one found there is taken up. */
  tokenStore?: TokenStore;
  /** Prefix of the API paths (default `''`: the page's own origin). */
  baseUrl?: string;
  /** Injected for tests (default the global). */
  fetch?: typeof fetch;
  /** Injected for tests (default the global). */
  EventSource?: typeof EventSource;
}

/** A client over the browser host's HTTP API and event stream. */
export function createHttpClient(options: HttpClientOptions): ApiClient {
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const EventSourceImpl = options.EventSource ?? (typeof EventSource === 'undefined' ? undefined : EventSource);
  const base = options.baseUrl ?? '';
  const events = new Listeners<EventBatch>();
  const resync = new Listeners<void>();
  const connection = new Listeners<ConnectionState>();
  let token = options.token;
  let state: ConnectionState = token === '' ? 'no-token' : 'connecting';
  let source: EventSource | undefined;
  let hadError = false;
  let closed = false;
  let probing = false;
  let wake: (() => void) | undefined;
  const setState = (next: ConnectionState): void => {
    if (next === state) return;
    state = next;
    connection.emit(state);
  };
  const track = seqTracker(() => resync.emit());
  const usable = (): boolean => state !== 'unauthorized' && state !== 'no-token';

  /** The host's answer to `/api/health` with the current token. */
  const health = async (): Promise<'ok' | 'refused' | 'unreachable'> => {
    if (token === '') return 'refused';
    try {
      const r = await doFetch(`${base}/api/health`, { headers: { Authorization: `Bearer ${token}` }, credentials: 'omit', cache: 'no-store' });
      if (r.status === 401) return 'refused';
      return r.ok ? 'ok' : 'unreachable';
    } catch {
      return 'unreachable';
    }
  };

  /** Drops the event stream (a refused token: the browser would retry it for nothing). */
  const dropStream = (): void => {
    source?.close();
    source = undefined;
  };

  /**
   * Until the host can be used again: asks it every few seconds (a token another tab stored is
   * tried too), then reopens the event stream, whose opening asks the stores to reload.
   */
  const probe = (): void => {
    if (probing || closed) return;
    probing = true;
    void (async () => {
      try {
        while (!closed) {
          const kept = options.tokenStore?.read();
          if (kept !== undefined && kept !== '' && kept !== token && !usable()) token = kept;
          const answer = await health();
          if (closed) return;
          if (answer === 'ok') {
            // The stream came back by itself meanwhile (its opening asked for the reload).
            if (state === 'open') return;
            if (source?.readyState !== 1) {
              dropStream();
              hadError = true;
              if (events.size > 0) open();
              else {
                setState('open');
                resync.emit();
              }
            } else {
              // Only calls failed (the stream stayed up): what they missed is reloaded.
              setState('open');
              resync.emit();
            }
            return;
          }
          if (answer === 'refused') {
            dropStream();
            setState(token === '' ? 'no-token' : 'unauthorized');
          } else if (usable()) setState('reconnecting');
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, answer === 'refused' ? PROBE_INTERVAL_MS.refused : PROBE_INTERVAL_MS.unreachable);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
        }
      } finally {
        probing = false;
      }
    })();
  };

  const call = async (channel: string, input: unknown): Promise<Result<unknown>> => {
    if (token === '') {
      probe();
      return failure('UNAUTHORIZED', `${channel}: this page has no API token (open the URL that runnel serve printed)`);
    }
    let response: Response;
    try {
      response = await doFetch(`${base}/api/${encodeURIComponent(channel).replace(/%3A/gi, ':')}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, ...(input === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(input === undefined ? {} : { body: JSON.stringify(input) }),
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch (error) {
      if (usable()) setState('reconnecting');
      probe();
      return failure('NETWORK_ERROR', `${channel}: the Runnel host cannot be reached (${error instanceof Error ? error.message : String(error)})`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      body = undefined;
    }
    if (response.status === 401) {
      dropStream();
      setState('unauthorized');
      probe();
    }
    if (isResult(body)) return body;
    if (!response.ok) {
      // Not the host answering (a proxy in front of a host that is away): as unreachable.
      if (usable()) setState('reconnecting');
      probe();
    }
    return failure(response.ok ? 'INTERNAL' : 'NETWORK_ERROR', `${channel}: the host answered HTTP ${response.status} without a result`);
  };

  const open = (): void => {
    if (source || !EventSourceImpl || closed) return;
    if (token === '') {
      probe();
      return;
    }
    const es = new EventSourceImpl(`${base}/api/events?token=${encodeURIComponent(token)}`);
    source = es;
    es.onopen = () => {
      if (source !== es) return;
      setState('open');
      if (hadError) resync.emit();
      hadError = false;
    };
    es.onerror = () => {
      if (source !== es) return;
      // The browser retries a dropped stream by itself (the host sends `retry: 2000`), but not
      // one the host refused (a 401 after a restart with a new token): the probe tells which,
      // and reopens the stream once the host can be used.
      hadError = true;
      if (usable()) setState('reconnecting');
      probe();
    };
    source.onmessage = (message: MessageEvent<string>) => {
      let batch: EventBatch;
      try {
        batch = JSON.parse(message.data) as EventBatch;
      } catch {
        return;
      }
      if (!Array.isArray(batch.events)) return;
      track(batch);
      events.emit(batch);
    };
  };
  if (token === '') probe();

  return {
    transport: 'http',
    invoke: ((channel: Channel, input?: unknown) => call(channel, input)) as Invoke,
    desktop: undefined,
    onEvent(listener) {
      const off = events.add(listener);
      open();
      return off;
    },
    onCommand: () => () => undefined,
    onResync: (listener) => resync.add(listener),
    onConnection(listener) {
      listener(state);
      return connection.add(listener);
    },
    setToken(next) {
      const given = next.trim();
      if (given === '' || closed) return;
      options.tokenStore?.save(given);
      if (given === token && usable()) return;
      token = given;
      dropStream();
      probe();
      wake?.();
    },
    close() {
      closed = true;
      wake?.();
      dropStream();
    },
  };
}

/** A client over the desktop app's preload bridge. */
export function createElectronClient(bridge: RunnelBridge): ApiClient {
  const resync = new Listeners<void>();
  const track = seqTracker(() => resync.emit());
  const offs: Array<() => void> = [];
  const events = new Listeners<EventBatch>();
  let subscribed = false;
  const ensure = (): void => {
    if (subscribed) return;
    subscribed = true;
    offs.push(
      bridge.onEvent((batch) => {
        track(batch);
        events.emit(batch);
      }),
      bridge.onCommand((command) => {
        if (command === 'database.changed') resync.emit();
      }),
    );
  };
  return {
    transport: 'electron',
    invoke: bridge.invoke,
    desktop: bridge.invoke,
    onEvent(listener) {
      ensure();
      return events.add(listener);
    },
    onCommand: (listener) => {
      ensure();
      return bridge.onCommand(listener);
    },
    onResync(listener) {
      ensure();
      return resync.add(listener);
    },
    onConnection(listener) {
      listener('open');
      return () => undefined;
    },
    close() {
      for (const off of offs.splice(0)) off();
      subscribed = false;
    },
  };
}

/** Key of the token in `sessionStorage` and `localStorage`. */
export const TOKEN_STORAGE_KEY = 'runnel.token';

/**
 * The browser host's token: from the page URL's `?token=` (then kept in `storage` and removed from
 * the address bar), else from `storage`, else undefined.
 */
export function takeToken(location: Pick<Location, 'href'>, storage: Pick<Storage, 'getItem' | 'setItem'> | undefined, history?: Pick<History, 'replaceState'>): string | undefined {
  const url = new URL(location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    try {
      storage?.setItem(TOKEN_STORAGE_KEY, fromUrl);
      url.searchParams.delete('token');
      history?.replaceState(null, '', url.pathname + (url.search === '?' ? '' : url.search) + url.hash);
    } catch {
      // storage may be disabled: keep the token in the URL then
    }
    return fromUrl;
  }
  try {
    return storage?.getItem(TOKEN_STORAGE_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * The page's token store: the tab's own `sessionStorage` first, then the origin's
 * `localStorage`, which every tab of the host shares (a tab opened on an address of the app
 * finds the token there). Both are written. Storage that is disabled is skipped.
 *
 * The token is the browser host's per-run secret for 127.0.0.1: kept per origin, it is as safe
 * in `localStorage` as in the tab, and useless after the host stops.
 */
export function browserTokenStore(session: Pick<Storage, 'getItem' | 'setItem'> | undefined, local: Pick<Storage, 'getItem' | 'setItem'> | undefined): TokenStore & Pick<Storage, 'getItem' | 'setItem'> {
  const get = (s: Pick<Storage, 'getItem'> | undefined, key: string): string | undefined => {
    try {
      return s?.getItem(key) ?? undefined;
    } catch {
      return undefined;
    }
  };
  const put = (s: Pick<Storage, 'setItem'> | undefined, key: string, value: string): void => {
    try {
      s?.setItem(key, value);
    } catch {
      // disabled storage: the token lives in this page only
    }
  };
  return {
    read: () => get(local, TOKEN_STORAGE_KEY) ?? get(session, TOKEN_STORAGE_KEY),
    save(token) {
      put(session, TOKEN_STORAGE_KEY, token);
      put(local, TOKEN_STORAGE_KEY, token);
    },
    getItem: (key) => get(session, key) ?? get(local, key) ?? null,
    setItem(key, value) {
      put(session, key, value);
      put(local, key, value);
    },
  };
}

/** Picks the transport of this page: the preload's bridge if present, else HTTP. */
export function createApiClient(win: Window = window): ApiClient {
  if (win.runnel) return createElectronClient(win.runnel);
  const storage = (name: 'sessionStorage' | 'localStorage'): Storage | undefined => {
    try {
      return win[name];
    } catch {
      return undefined;
    }
  };
  const tokens = browserTokenStore(storage('sessionStorage'), storage('localStorage'));
  return createHttpClient({ token: takeToken(win.location, tokens, win.history) ?? '', tokenStore: tokens });
}

/** Something that reports failed calls (the toast store). */
export type ErrorReporter = (channel: string, error: { code: string; message: string; details?: unknown }) => void;

/**
 * Failures that mean "the host cannot be used", not "this call was refused": the connection's
 * state shows them once (`ConnectionBanner`), so they are not reported call by call.
 */
export const CONNECTION_ERROR_CODES: ReadonlySet<string> = new Set(['UNAUTHORIZED', 'NETWORK_ERROR']);

/**
 * Wraps `client` so that every failed call (contract or desktop) is also reported to `report`
 * (the renderer shows each as a toast with its code and message), except connection failures
 * ({@link CONNECTION_ERROR_CODES}). The result is unchanged.
 */
export function withErrorReporting(client: ApiClient, report: ErrorReporter): ApiClient {
  type AnyInvoke = (channel: string, input?: unknown) => Promise<Result<unknown>>;
  const wrap = (invoke: AnyInvoke): AnyInvoke => async (channel, input) => {
    const result = await invoke(channel, input);
    if (!result.ok && !CONNECTION_ERROR_CODES.has(result.error.code)) report(channel, result.error);
    return result;
  };
  return {
    transport: client.transport,
    invoke: wrap(client.invoke as AnyInvoke) as Invoke,
    desktop: client.desktop ? (wrap(client.desktop as AnyInvoke) as DesktopInvoke) : undefined,
    onEvent: (l) => client.onEvent(l),
    onCommand: (l) => client.onCommand(l),
    onResync: (l) => client.onResync(l),
    onConnection: (l) => client.onConnection(l),
    setToken: (t) => client.setToken?.(t),
    close: () => client.close(),
  };
}
