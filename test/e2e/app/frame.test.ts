// End to end in real Chromium (Debian's, driven by playwright-core) through the browser host:
// the built renderer loads, lists the example workflows, starts instances, and their status
// changes on screen, live from the event stream, until COMPLETED.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteEngine } from '../../../engine/runtime/engine';
import { createDefaultRegistry } from '../../../engine/nodes/registry';
import { register as registerPipelineNodes } from '../../../examples/pipeline-nodes';
import { openStartPanel } from '../../helpers/monitor-app';
import { chromiumPath } from '../../../scripts/chromium';
import { startServer, type RunningServer } from '../../../server/index';
import { rendererFor } from '../../helpers/renderer-build';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const EXAMPLES = ['csv-pipeline', 'ota-upgrade', 'purchase-approval'];

let work: string;
let engine: SqliteEngine;
let server: RunningServer;
let context: BrowserContext;
let page: Page;
const consoleErrors: string[] = [];

/** A contract call through the browser host, as any HTTP client would make it. */
async function api<T>(channel: string, input: unknown): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${server.port}/api/${channel}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(input),
  });
  const result = (await res.json()) as { ok: boolean; value?: T; error?: unknown };
  if (!result.ok) throw new Error(`${channel}: ${JSON.stringify(result.error)}`);
  return result.value as T;
}

/** Starts the selected workflow from the UI; returns the new instance's id (the newest row). */
async function startFromUi(workflow: string, variables = '{}'): Promise<number> {
  const before = new Set(await page.locator('[data-testid^="instance-row-"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-testid'))));
  await page.getByTestId(`workflow-item-${workflow}`).click();
  await expect.poll(() => page.getByTestId('selected-workflow').textContent()).toBe(workflow);
  await openStartPanel(page);
  await page.getByTestId('start-vars').fill(variables);
  await page.getByTestId('start-instance').click();
  let id = -1;
  await expect
    .poll(async () => {
      const ids = await page.locator('[data-testid^="instance-row-"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-testid')));
      const fresh = ids.filter((t) => t !== null && !before.has(t));
      if (fresh[0]) id = Number(fresh[0].replace('instance-row-', ''));
      return fresh.length;
    })
    .toBe(1);
  return id;
}

/** Every status the cell shows until it reads `until` (sampled every 25 ms). */
async function watchStatus(id: number, until: string, timeoutMs = 20_000): Promise<string[]> {
  const seen: string[] = [];
  const cell = page.getByTestId(`instance-status-${id}`);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const text = (await cell.textContent({ timeout: 1000 }).catch(() => null)) ?? '';
    if (text !== '' && seen[seen.length - 1] !== text) seen.push(text);
    if (text === until) return seen;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`instance ${id} did not reach ${until} on screen; saw ${seen.join(' → ')}`);
}

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'runnel-e2e-'));
  const rendererDir = await rendererFor(work);

  const registry = createDefaultRegistry();
  registerPipelineNodes(registry);
  engine = SqliteEngine.open(path.join(work, 'runnel.db'), { registry, pollIntervalMs: 10 });
  for (const name of EXAMPLES) await engine.deploy(JSON.parse(fs.readFileSync(path.join(root, 'examples', `${name}.workflow.json`), 'utf8')));
  await engine.deploy(JSON.parse(fs.readFileSync(path.join(root, 'test/fixtures/e2e-delay.workflow.json'), 'utf8')));
  server = await startServer({ engine, rendererDir, eventIntervalMs: 50 });

  context = await chromium.launchPersistentContext(path.join(work, 'chromium-profile'), {
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(e.message));
  await page.goto(server.url);
  // A marker that a reload or navigation would wipe: the updates must arrive without either.
  await page.evaluate(() => ((globalThis as unknown as { __noReload: boolean }).__noReload = true));
});

afterAll(async () => {
  await context?.close();
  await server?.close();
  await engine?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('the app in Chromium through the browser host', () => {
  it('loads the frame with its three views, and moves the token out of the address bar', async () => {
    for (const v of ['designer', 'instances', 'dashboard']) await expect.poll(() => page.getByTestId(`nav-${v}`).isVisible()).toBe(true);
    await page.getByTestId('nav-designer').click();
    await expect.poll(() => page.getByTestId('view-designer').isVisible()).toBe(true);
    await page.getByTestId('nav-dashboard').click();
    await expect.poll(() => page.getByTestId('view-dashboard').isVisible()).toBe(true);
    await page.getByTestId('nav-instances').click();
    await expect.poll(() => page.getByTestId('instances-table').isVisible()).toBe(true);
    expect(page.url()).not.toContain('token=');
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('open');
  });

  it('lists the example workflows in the sidebar', async () => {
    for (const name of [...EXAMPLES, 'e2e-delay']) {
      await expect.poll(() => page.getByTestId(`workflow-item-${name}`).count()).toBe(1);
    }
    expect(await page.getByTestId('workflow-list').locator('[data-testid^="workflow-item-"]').count()).toBe(4);
  });

  it('starts an instance, and its status changes on screen until COMPLETED without a reload', async () => {
    const id = await startFromUi('e2e-delay');
    const seen = await watchStatus(id, 'COMPLETED');
    // It was seen live before it ended (the delay takes 1.5 s), not only after a refresh.
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.slice(0, -1).every((s) => ['PENDING', 'RUNNING', 'WAITING'].includes(s))).toBe(true);
    expect(await page.evaluate(() => (globalThis as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    await expect(api('instance:get', { id })).resolves.toMatchObject({ status: 'COMPLETED' });
  });

  it('starts the purchase approval; approving it through the API flips the row to COMPLETED live', async () => {
    const id = await startFromUi('purchase-approval', '{"requester": "Ada"}');
    // On screen it waits for a person (the page showed WAITING before anyone approved) …
    expect((await watchStatus(id, 'WAITING')).at(-1)).toBe('WAITING');
    expect(await page.getByTestId(`instance-status-${id}`).textContent()).toBe('WAITING');
    // … then someone approves elsewhere (here: straight through the API), and the row flips.
    await api('instance:approve', { id, nodeId: 'approve', approved: true, actor: 'e2e', comment: 'fine' });
    expect((await watchStatus(id, 'COMPLETED')).at(-1)).toBe('COMPLETED');
    expect(await page.evaluate(() => (globalThis as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    const detail = await api<{ variables: { order?: { status: string } } }>('instance:get', { id });
    expect(detail.variables.order?.status).toBe('placed');
  });

  it('shows a refused start with its code and message beside the editor, once (not as a toast too)', async () => {
    await page.getByTestId('workflow-item-ota-upgrade').click();
    await openStartPanel(page);
    await page.getByTestId('start-vars').fill('{}');
    await page.getByTestId('start-instance').click();
    await expect.poll(() => page.getByTestId('start-vars-error').textContent()).toMatch(/INVALID_VARIABLES.*deviceId/);
    await page.waitForTimeout(200);
    expect(await page.getByTestId('toast').count()).toBe(0);
    // Invalid JSON never reaches the host: it is named beside the field.
    await page.getByTestId('start-vars').fill('{"deviceId": ');
    await page.getByTestId('start-instance').click();
    await expect.poll(() => page.getByTestId('start-vars-error').textContent()).toMatch(/not valid JSON/);
  });

  it('ran without page errors or CSP violations', () => {
    expect(consoleErrors).toEqual([]);
  });
});
