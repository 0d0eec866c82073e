// The renderer's API client: transport choice, the HTTP protocol of the browser host (fake fetch
// and EventSource), the token's journey, and the Electron bridge path.
import { describe, expect, it } from 'vitest';
import type { EventBatch, Result } from '../../../../engine/api/contract';
import type { RunnelBridge } from '../../../../electron/preload/api';
import type { DesktopCommand } from '../../../../electron/shared/commands';
import { browserTokenStore, createApiClient, createElectronClient, createHttpClient, takeToken, TOKEN_STORAGE_KEY, withErrorReporting, type ConnectionState } from '../../../../renderer/src/api/client';

class FakeEventSource {
  static last: FakeEventSource | undefined;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  onmessage: ((m: { data: string }) => void) | null = null;
  closed = false;
  constructor(readonly url: string) {
    FakeEventSource.last = this;
  }
  close() {
    this.closed = true;
  }
  message(value: unknown) {
    this.onmessage?.({ data: typeof value === 'string' ? value : JSON.stringify(value) });
  }
}

function fakeFetch(respond: (url: string, init: RequestInit) => Response | Promise<Response>) {
  const requests: Array<{ url: string; init: RequestInit }> = [];
  const f = (input: string | URL | Request, init?: RequestInit) => {
    requests.push({ url: String(input), init: init ?? {} });
    return Promise.resolve(respond(String(input), init ?? {}));
  };
  return { fetch: f as typeof fetch, requests };
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const batch = (seq: number): EventBatch => ({ seq, events: [{ type: 'instance.changed', instanceId: 1, status: 'RUNNING' }], coalesced: 0 });

describe('createHttpClient', () => {
  it('posts the input as JSON to /api/<channel> with the bearer token, and returns the host\'s Result', async () => {
    const { fetch, requests } = fakeFetch(() => json({ ok: true, value: { id: 3, status: 'PENDING', version: 1 } }));
    const client = createHttpClient({ token: 't0k', fetch, EventSource: FakeEventSource as unknown as typeof EventSource });
    await expect(client.invoke('instance:start', { workflow: 'w', variables: { a: 1 } })).resolves.toEqual({ ok: true, value: { id: 3, status: 'PENDING', version: 1 } });
    expect(requests[0]?.url).toBe('/api/instance:start');
    expect(requests[0]?.init.method).toBe('POST');
    expect(requests[0]?.init.headers).toMatchObject({ Authorization: 'Bearer t0k', 'Content-Type': 'application/json' });
    expect(requests[0]?.init.body).toBe('{"workflow":"w","variables":{"a":1}}');
    expect(client.transport).toBe('http');
    expect(client.desktop).toBeUndefined();
  });

  it('sends no body for a call without input', async () => {
    const { fetch, requests } = fakeFetch(() => json({ ok: true, value: [] }));
    await createHttpClient({ token: 't', fetch }).invoke('workflow:list');
    expect(requests[0]?.init.body).toBeUndefined();
  });

  it('passes typed refusals through (401, 403, 413 come with a Result body)', async () => {
    const { fetch } = fakeFetch(() => json({ ok: false, error: { code: 'UNAUTHORIZED', message: 'the API token is wrong' } }, 401));
    await expect(createHttpClient({ token: 'bad', fetch }).invoke('workflow:list')).resolves.toEqual({ ok: false, error: { code: 'UNAUTHORIZED', message: 'the API token is wrong' } });
  });

  it('turns an unreachable host or a body that is not a Result into NETWORK_ERROR / INTERNAL data', async () => {
    const down = createHttpClient({ token: 't', fetch: (() => Promise.reject(new TypeError('Failed to fetch'))) as typeof fetch });
    await expect(down.invoke('workflow:list')).resolves.toMatchObject({ ok: false, error: { code: 'NETWORK_ERROR', message: expect.stringContaining('Failed to fetch') } });
    const proxy = createHttpClient({ token: 't', fetch: fakeFetch(() => new Response('<html>Bad gateway</html>', { status: 502 })).fetch });
    await expect(proxy.invoke('workflow:list')).resolves.toMatchObject({ ok: false, error: { code: 'NETWORK_ERROR', message: expect.stringContaining('502') } });
    const odd = createHttpClient({ token: 't', fetch: fakeFetch(() => json({ hello: 1 })).fetch });
    await expect(odd.invoke('workflow:list')).resolves.toMatchObject({ ok: false, error: { code: 'INTERNAL' } });
  });

  it('opens the event stream with the token on first subscription, and delivers batches', () => {
    const client = createHttpClient({ token: 'a b', fetch: fakeFetch(() => json({})).fetch, EventSource: FakeEventSource as unknown as typeof EventSource });
    FakeEventSource.last = undefined;
    const states: ConnectionState[] = [];
    client.onConnection((s) => states.push(s));
    expect(FakeEventSource.last).toBeUndefined();
    const got: EventBatch[] = [];
    client.onEvent((b) => got.push(b));
    const es = FakeEventSource.last as FakeEventSource | undefined;
    expect(es?.url).toBe('/api/events?token=a%20b');
    es?.onopen?.();
    es?.message(batch(1));
    es?.message('garbage');
    es?.message({ not: 'a batch' });
    expect(got).toEqual([batch(1)]);
    expect(states).toEqual(['connecting', 'open']);
    client.close();
    expect(es?.closed).toBe(true);
  });

  it('asks for a resync after a reconnect and after a skipped batch number', () => {
    const client = createHttpClient({ token: 't', fetch: fakeFetch(() => json({})).fetch, EventSource: FakeEventSource as unknown as typeof EventSource });
    let resyncs = 0;
    client.onResync(() => resyncs++);
    client.onEvent(() => undefined);
    const es = FakeEventSource.last as FakeEventSource;
    es.onopen?.();
    es.message(batch(1));
    es.message(batch(2));
    expect(resyncs).toBe(0);
    es.message(batch(5));
    expect(resyncs).toBe(1);
    es.onerror?.();
    es.onopen?.();
    expect(resyncs).toBe(2);
  });
});

describe('the connection when the host cannot be used', () => {
  const flush = () => new Promise((r) => setTimeout(r, 0));

  it('a refused token: unauthorized at once, the stream dropped, no toast; a token another tab stored is taken up', async () => {
    const accepted = 'new';
    const { fetch, requests } = fakeFetch((url, init) => {
      const auth = (init.headers as Record<string, string> | undefined)?.Authorization;
      if (auth !== `Bearer ${accepted}`) return json({ ok: false, error: { code: 'UNAUTHORIZED', message: 'the API token is wrong' } }, 401);
      return url.endsWith('/api/health') ? json({ ok: true, value: { status: 'ok' } }) : json({ ok: true, value: [] });
    });
    const kept = new Map<string, string>();
    const store = { read: () => kept.get('t'), save: (t: string) => void kept.set('t', t) };
    const reported: string[] = [];
    const client = withErrorReporting(createHttpClient({ token: 'old', fetch, tokenStore: store, EventSource: FakeEventSource as unknown as typeof EventSource }), (_c, e) => reported.push(e.code));
    const states: ConnectionState[] = [];
    let resyncs = 0;
    client.onConnection((st) => states.push(st));
    client.onResync(() => resyncs++);
    client.onEvent(() => undefined);
    const first = FakeEventSource.last as FakeEventSource;
    for (let i = 0; i < 4; i++) await expect(client.invoke('workflow:list')).resolves.toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
    expect(states).toEqual(['connecting', 'unauthorized']);
    expect(first.closed).toBe(true);
    expect(reported).toEqual([]);
    // another tab opened the URL of the new run: its token is found and used
    store.save('new');
    client.setToken?.('new');
    await flush();
    await flush();
    const reopened = FakeEventSource.last as FakeEventSource;
    expect(reopened).not.toBe(first);
    expect(reopened.url).toBe('/api/events?token=new');
    reopened.onopen?.();
    expect(states.at(-1)).toBe('open');
    expect(resyncs).toBe(1);
    await expect(client.invoke('workflow:list')).resolves.toEqual({ ok: true, value: [] });
    expect(requests.some((r) => r.url === '/api/health')).toBe(true);
    client.close();
  });

  it('no token: says so without calling the host, and never toasts', async () => {
    const { fetch, requests } = fakeFetch(() => json({ ok: true, value: [] }));
    const reported: string[] = [];
    const client = withErrorReporting(createHttpClient({ token: '', fetch }), (_c, e) => reported.push(e.code));
    const states: ConnectionState[] = [];
    client.onConnection((st) => states.push(st));
    await expect(client.invoke('workflow:list')).resolves.toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED', message: expect.stringContaining('no API token') } });
    expect(states).toEqual(['no-token']);
    expect(requests).toEqual([]);
    expect(reported).toEqual([]);
    client.close();
  });

  it('an unreachable host: reconnecting (no toast), then open again with a resync once it answers', async () => {
    let up = false;
    const { fetch } = fakeFetch(() => (up ? json({ ok: true, value: { status: 'ok' } }) : Promise.reject(new TypeError('Failed to fetch'))));
    const reported: string[] = [];
    const client = withErrorReporting(createHttpClient({ token: 't', fetch }), (_c, e) => reported.push(e.code));
    const states: ConnectionState[] = [];
    let resyncs = 0;
    client.onConnection((st) => states.push(st));
    client.onResync(() => resyncs++);
    await expect(client.invoke('workflow:list')).resolves.toMatchObject({ ok: false, error: { code: 'NETWORK_ERROR' } });
    expect(states).toEqual(['connecting', 'reconnecting']);
    expect(reported).toEqual([]);
    up = true;
    await new Promise((r) => setTimeout(r, 2100));
    expect(states.at(-1)).toBe('open');
    expect(resyncs).toBe(1);
    client.close();
  });

  it('other refusals are still reported', async () => {
    const { fetch } = fakeFetch(() => json({ ok: false, error: { code: 'INVALID_VARIABLES', message: 'deviceId' } }));
    const reported: string[] = [];
    const client = withErrorReporting(createHttpClient({ token: 't', fetch }), (_c, e) => reported.push(e.code));
    await client.invoke('workflow:list');
    expect(reported).toEqual(['INVALID_VARIABLES']);
  });
});

describe('browserTokenStore', () => {
  it('writes both storages; reads the origin-wide one first (the newest any tab stored), then the tab\'s', () => {
    const session = new Map<string, string>();
    const local = new Map<string, string>();
    const asStorage = (m: Map<string, string>) => ({ getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v) });
    const store = browserTokenStore(asStorage(session), asStorage(local));
    expect(store.read()).toBeUndefined();
    store.save('a');
    expect([session.get(TOKEN_STORAGE_KEY), local.get(TOKEN_STORAGE_KEY)]).toEqual(['a', 'a']);
    local.set(TOKEN_STORAGE_KEY, 'b');
    expect(store.read()).toBe('b');
    const broken = { getItem: () => { throw new Error('denied'); }, setItem: () => { throw new Error('denied'); } };
    const tolerant = browserTokenStore(broken, asStorage(local));
    expect(tolerant.read()).toBe('b');
    expect(() => tolerant.save('c')).not.toThrow();
  });
});

describe('takeToken', () => {
  function storage() {
    const map = new Map<string, string>();
    return { getItem: (k: string) => map.get(k) ?? null, setItem: (k: string, v: string) => void map.set(k, v), map };
  }

  it('takes the token from the URL, keeps it in session storage and removes it from the address bar', () => {
    const s = storage();
    const replaced: string[] = [];
    const token = takeToken({ href: 'http://127.0.0.1:4000/?token=abc&x=1#top' }, s, { replaceState: (_d: unknown, _t: string, url?: string | URL | null) => void replaced.push(String(url)) });
    expect(token).toBe('abc');
    expect(s.map.get(TOKEN_STORAGE_KEY)).toBe('abc');
    expect(replaced).toEqual(['/?x=1#top']);
  });

  it('after a reload without ?token=, uses the stored one; with neither, none', () => {
    const s = storage();
    s.setItem(TOKEN_STORAGE_KEY, 'kept');
    expect(takeToken({ href: 'http://127.0.0.1:4000/' }, s)).toBe('kept');
    expect(takeToken({ href: 'http://127.0.0.1:4000/' }, storage())).toBeUndefined();
  });
});

describe('Electron transport', () => {
  function fakeBridge() {
    const eventListeners = new Set<(b: EventBatch) => void>();
    const commandListeners = new Set<(c: DesktopCommand) => void>();
    const calls: Array<[string, unknown]> = [];
    const bridge: RunnelBridge = {
      invoke: ((channel: string, input?: unknown) => {
        calls.push([channel, input]);
        return Promise.resolve({ ok: true, value: channel } satisfies Result<string>);
      }) as RunnelBridge['invoke'],
      onEvent: (l) => (eventListeners.add(l), () => void eventListeners.delete(l)),
      onCommand: (l) => (commandListeners.add(l), () => void commandListeners.delete(l)),
    };
    return { bridge, calls, event: (b: EventBatch) => eventListeners.forEach((l) => l(b)), command: (c: DesktopCommand) => commandListeners.forEach((l) => l(c)) };
  }

  it('given window.runnel, createApiClient picks IPC and never fetches', async () => {
    const fake = fakeBridge();
    const client = createApiClient({ runnel: fake.bridge } as unknown as Window);
    expect(client.transport).toBe('electron');
    await expect(client.invoke('workflow:list')).resolves.toEqual({ ok: true, value: 'workflow:list' });
    await expect(client.desktop?.('app:info')).resolves.toEqual({ ok: true, value: 'app:info' });
    expect(fake.calls).toEqual([
      ['workflow:list', undefined],
      ['app:info', undefined],
    ]);
  });

  it('without window.runnel, createApiClient picks HTTP with the page\'s token', async () => {
    const stored = new Map<string, string>();
    const win = {
      location: { href: 'http://127.0.0.1:4000/?token=zzz' },
      sessionStorage: { getItem: (k: string) => stored.get(k) ?? null, setItem: (k: string, v: string) => void stored.set(k, v) },
      history: { replaceState: () => undefined },
    } as unknown as Window;
    const client = createApiClient(win);
    expect(client.transport).toBe('http');
    expect(stored.get(TOKEN_STORAGE_KEY)).toBe('zzz');
  });

  it('delivers events and commands; a database switch is a resync', () => {
    const fake = fakeBridge();
    const client = createElectronClient(fake.bridge);
    const got: number[] = [];
    const commands: string[] = [];
    let resyncs = 0;
    client.onEvent((b) => got.push(b.seq));
    client.onCommand((c) => commands.push(c));
    client.onResync(() => resyncs++);
    fake.event(batch(1));
    fake.event(batch(2));
    fake.command('workflow.import');
    fake.command('database.changed');
    expect(got).toEqual([1, 2]);
    expect(commands).toEqual(['workflow.import', 'database.changed']);
    expect(resyncs).toBe(1);
  });
});
