/**
 * The renderer's only way to the engine: one typed client over whichever transport the page runs
 * on, picked once at start-up.
 *
 * - Desktop app: `window.runnel` (the preload's bridge, `electron/preload/bridge.ts`) carries
 *   calls over Electron IPC, events and menu commands back.
 * - Browser host: `POST /api/<channel>` with `Authorization: Bearer <token>` and a JSON body,
 *   events from `EventSource('/api/events?token=…')`. The token comes from the page URL's
 *   `?token=` once, is kept in `sessionStorage` (so a reload keeps working) and removed from the
 *   address bar (so it is not bookmarked or shared by accident).
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

/** State of the event stream. */
export type ConnectionState = 'connecting' | 'open' | 'reconnecting';

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
  /** Subscribes to the event stream's state (called at once with the current one). */
  onConnection(listener: (state: ConnectionState) => void): () => void;
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

/** Options of {@link createHttpClient}. */
export interface HttpClientOptions {
  /** The browser host's per-run token. */
  token: string;
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
  let state: ConnectionState = 'connecting';
  let source: EventSource | undefined;
  let hadError = false;
  const setState = (next: ConnectionState): void => {
    if (next === state) return;
    state = next;
    connection.emit(state);
  };
  const track = seqTracker(() => resync.emit());

  const call = async (channel: string, input: unknown): Promise<Result<unknown>> => {
    let response: Response;
    try {
      response = await doFetch(`${base}/api/${encodeURIComponent(channel).replace(/%3A/gi, ':')}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${options.token}`, ...(input === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(input === undefined ? {} : { body: JSON.stringify(input) }),
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch (error) {
      return failure('NETWORK_ERROR', `${channel}: the Runnel host cannot be reached (${error instanceof Error ? error.message : String(error)})`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      body = undefined;
    }
    if (isResult(body)) return body;
    return failure(response.ok ? 'INTERNAL' : 'NETWORK_ERROR', `${channel}: the host answered HTTP ${response.status} without a result`);
  };

  const open = (): void => {
    if (source || !EventSourceImpl) return;
    source = new EventSourceImpl(`${base}/api/events?token=${encodeURIComponent(options.token)}`);
    source.onopen = () => {
      setState('open');
      if (hadError) resync.emit();
      hadError = false;
    };
    source.onerror = () => {
      // EventSource reconnects on its own (the host sends `retry: 2000`).
      hadError = true;
      setState('reconnecting');
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
    close() {
      source?.close();
      source = undefined;
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

/** Key of the token in `sessionStorage`. */
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

/** Picks the transport of this page: the preload's bridge if present, else HTTP. */
export function createApiClient(win: Window = window): ApiClient {
  if (win.runnel) return createElectronClient(win.runnel);
  let storage: Storage | undefined;
  try {
    storage = win.sessionStorage;
  } catch {
    storage = undefined;
  }
  return createHttpClient({ token: takeToken(win.location, storage, win.history) ?? '' });
}

/** Something that reports failed calls (the toast store). */
export type ErrorReporter = (channel: string, error: { code: string; message: string; details?: unknown }) => void;

/**
 * Wraps `client` so that every failed call (contract or desktop) is also reported to `report`
 * (the renderer shows each as a toast with its code and message). The result is unchanged.
 */
export function withErrorReporting(client: ApiClient, report: ErrorReporter): ApiClient {
  type AnyInvoke = (channel: string, input?: unknown) => Promise<Result<unknown>>;
  const wrap = (invoke: AnyInvoke): AnyInvoke => async (channel, input) => {
    const result = await invoke(channel, input);
    if (!result.ok) report(channel, result.error);
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
    close: () => client.close(),
  };
}
