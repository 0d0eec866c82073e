// End to end in Chromium through the browser host (real SQLite file): what an open tab says when
// the host goes away and comes back (issue 15, item 2). Stopped and started again on the same
// port with the same token, the tab reconnects by itself (event stream and data); with a new
// token (as every run of `runnel serve` makes), it says once what happened and how to get back in,
// and follows as soon as the new URL is opened in another tab; a tab opened without the token
// says the same, not "an empty database". Connection failures never become a stack of toasts.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { startServer, type RunningServer } from '../../../server/index';
import { notReloaded, startMonitorApp, waitText, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

let app: MonitorApp;
/** The host serving now (the helper's first one is closed by the first restart). */
let host: RunningServer;

const QUICK = { name: 'quick', nodes: [{ id: 'a', type: 'pass' }], edges: [] };

/** Stops the host and starts it again on its port, with `token` (default: the same one). */
async function restart(token = host.token, gapMs = 0): Promise<void> {
  const port = host.port;
  await host.close();
  if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
  host = await startServer({ engine: app.engine, rendererDir: app.rendererDir, port, token, eventIntervalMs: 50 });
}

/** A contract call to the host serving now. */
async function api<T>(channel: string, input?: unknown): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${host.port}/api/${channel}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${host.token}`, 'Content-Type': 'application/json' },
    body: input === undefined ? '' : JSON.stringify(input),
  });
  const r = (await res.json()) as { ok: boolean; value?: T; error?: unknown };
  if (!r.ok) throw new Error(`${channel}: ${JSON.stringify(r.error)}`);
  return r.value as T;
}

beforeAll(async () => {
  app = await startMonitorApp({ viewport: { width: 1440, height: 900 } });
  host = app.server;
  await app.engine.deploy(QUICK);
});
afterAll(async () => {
  // The host serving now first: its worker stops before the helper closes the engine.
  await host?.close();
  await app?.close();
});

const toasts = () => app.page.getByTestId('toast').count();

describe('when the browser host goes away', () => {
  it('and comes back on the same token, the tab reconnects by itself: events and data', async () => {
    const { page } = app;
    await page.getByTestId('nav-instances').click();
    const first = (await api<Output<'instance:start'>>('instance:start', { workflow: 'quick' })).id;
    await waitText(page.getByTestId(`instance-status-${first}`), 'COMPLETED');

    // when the host stops
    const port = host.port;
    await host.close();
    // (whatever fails below, the next tests get a host again)
    const down = host;
    onTestFinished(async () => {
      if (host === down) host = await startServer({ engine: app.engine, rendererDir: app.rendererDir, port, token: down.token, eventIntervalMs: 50 });
    });
    // then one banner says so, and a Refresh adds no toast to it
    await page.getByTestId('connection-banner').waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('connection-banner').textContent()).toMatch(/Lost contact with the Runnel host\. Retrying every 2 s; what is shown is from .*If runnel serve was restarted and printed a new URL, open that one\./);
    await page.getByTestId('refresh-instances').click();
    await page.getByTestId('refresh-workflows').click();
    await page.waitForTimeout(1000);
    expect(await toasts()).toBe(0);
    expect(await page.getByTestId('connection-banner').count()).toBe(1);

    // when, meanwhile, an instance is made, and the host starts again with the same token
    const during = await app.engine.start('quick');
    host = await startServer({ engine: app.engine, rendererDir: app.rendererDir, port, token: host.token, eventIntervalMs: 50 });
    // then the tab is back without a reload: the banner goes, the data is reloaded …
    await page.getByTestId('connection-reconnected').waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('connection-banner').count()).toBe(0);
    await waitText(page.getByTestId(`instance-status-${during}`), 'COMPLETED');
    await waitUntil(() => page.getByTestId('connection-status').getAttribute('data-state'), (s) => s === 'open', 'the stream open');
    // … and the event stream is live again
    const after = (await api<Output<'instance:start'>>('instance:start', { workflow: 'quick' })).id;
    await waitText(page.getByTestId(`instance-status-${after}`), 'COMPLETED');
    expect(await toasts()).toBe(0);
    expect(await notReloaded(page)).toBe(true);
  });

  it('and comes back with a new token, the tab says how to get back in, once, and follows the new URL', async () => {
    const { page } = app;
    await page.getByTestId('nav-dashboard').click();
    await page.getByTestId('nav-instances').click();
    const before = (await api<Output<'instance:list'>>('instance:list', {})).items.length;

    // when `runnel serve` is run again: same port, a new token
    await restart('a-new-token-of-the-next-run-0123', 300);
    // then one screen over the app says what happened and what to open
    const screen = page.getByTestId('connection-screen');
    await screen.waitFor({ timeout: 15_000 });
    expect(await screen.getAttribute('data-state')).toBe('unauthorized');
    const text = (await screen.textContent()) ?? '';
    expect(text).toMatch(/refused this tab's API token/);
    expect(text).toMatch(/open the URL that runnel serve printed/);
    expect(text).toContain(`http://127.0.0.1:${host.port}/?token=…`);
    // a Refresh behind it (the screen covers the button: clicked by script) stacks no toasts
    await page.getByTestId('refresh-instances').dispatchEvent('click');
    await page.getByTestId('refresh-workflows').dispatchEvent('click');
    await page.waitForTimeout(1000);
    expect(await toasts()).toBe(0);
    expect(await page.getByTestId('connection-screen').count()).toBe(1);

    // when the URL serve printed is opened in another tab
    const other = await app.context.newPage();
    try {
      await other.goto(host.url);
      await other.getByTestId('instances-table').waitFor();
      // then this tab follows by itself, at the same place, with fresh data and live events
      await screen.waitFor({ state: 'detached', timeout: 15_000 });
      expect(new URL(page.url()).hash).toBe('#/instances');
      await waitUntil(() => page.getByTestId('connection-status').getAttribute('data-state'), (s) => s === 'open', 'the stream open');
      const id = (await api<Output<'instance:start'>>('instance:start', { workflow: 'quick' })).id;
      await waitText(page.getByTestId(`instance-status-${id}`), 'COMPLETED');
      expect((await api<Output<'instance:list'>>('instance:list', {})).items.length).toBe(before + 1);
      expect(await notReloaded(page)).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('a tab without the token says the same, not an empty database; pasting the URL lets it in', async () => {
    const tab = await app.context.newPage();
    try {
      // given: no token anywhere for this origin (a first visit to the bare address), on an instance
      const id = (await api<Output<'instance:start'>>('instance:start', { workflow: 'quick' })).id;
      await tab.goto(`http://127.0.0.1:${host.port}/#/instances/${id}/history`);
      await tab.evaluate(() => {
        localStorage.clear();
        sessionStorage.clear();
      });
      await tab.reload();
      const screen = tab.getByTestId('connection-screen');
      await screen.waitFor();
      expect(await screen.getAttribute('data-state')).toBe('no-token');
      expect(await screen.textContent()).toMatch(/opened without the API token that runnel serve prints.*does not mean an empty database/);
      await tab.setViewportSize({ width: 1280, height: 720 });
      expect(await tab.getByTestId('toast').count()).toBe(0);
      expect(await tab.getByTestId('workflow-list-empty').count()).toBe(0);
      // a wrong paste is named, the printed URL lets it in where it was
      await tab.getByTestId('connection-token').fill('not a url');
      await tab.getByTestId('connection-connect').click();
      await tab.getByText('Paste the whole URL').waitFor();
      await tab.getByTestId('connection-token').fill(host.url);
      await tab.getByTestId('connection-connect').click();
      await screen.waitFor({ state: 'detached', timeout: 15_000 });
      await tab.locator(`[data-testid="instance-detail"][data-id="${id}"][data-status="COMPLETED"]`).waitFor();
      expect(await tab.locator('[data-testid="detail-tab-history"][aria-selected="true"]').count()).toBe(1);
      await tab.getByTestId('workflow-item-quick').waitFor();
      expect(new URL(tab.url()).hash).toBe(`#/instances/${id}/history`);
      // the Designer's palette, which could not load without the token, is there too
      await tab.getByTestId('nav-designer').click();
      await tab.getByTestId('palette-item-pass').waitFor();
    } finally {
      await tab.close();
    }
  });

  it('a Dashboard and a Database view opened without the token show the data as soon as the URL is given, not at their next poll', async () => {
    const tab = await app.context.newPage();
    try {
      await api<Output<'instance:start'>>('instance:start', { workflow: 'quick' });
      for (const view of ['dashboard', 'database'] as const) {
        // given: a first visit to the view without the token
        await tab.goto(`http://127.0.0.1:${host.port}/#/${view}`);
        await tab.evaluate(() => {
          localStorage.clear();
          sessionStorage.clear();
        });
        // (the view loads when it shows, with the screen, then polls every 5 s)
        await tab.reload();
        await tab.getByTestId('connection-screen').waitFor();
        const shown = Date.now();
        // when: the URL serve printed is given
        await tab.getByTestId('connection-token').fill(host.url);
        await tab.getByTestId('connection-connect').click();
        await tab.getByTestId('connection-screen').waitFor({ state: 'detached', timeout: 3000 });
        // then: the view shows the database's data well before its next poll (5 s after it showed)
        const before = Math.max(1, shown + 4000 - Date.now());
        if (view === 'dashboard') await tab.getByTestId('dash-workflow-quick').waitFor({ timeout: before });
        else await tab.getByTestId('db-file-bytes').waitFor({ timeout: before });
      }
    } finally {
      await tab.close();
    }
  });

  it('ran without page errors', () => {
    // Chromium logs what these tests do to the tab as failed resources: the old token refused
    // (401), the host gone (connection refused), the event stream cut by its stop. Nothing else.
    expect(app.errors.filter((e) => !/status of 401|ERR_CONNECTION_REFUSED|ERR_INCOMPLETE_CHUNKED_ENCODING/.test(e))).toEqual([]);
  });
});
