/**
 * End-to-end helpers for the monitor: the built renderer served by a real browser host over a
 * real engine on a temp file, driven in Debian's Chromium through playwright-core (as
 * test/e2e/app/frame.test.ts does), plus the few moves every monitor test makes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { Engine, type EngineOptions, SqliteEngine } from '../../engine/runtime/engine';
import { chromiumPath } from '../../scripts/chromium';
import { startServer, type RunningServer } from '../../server/index';
import { rendererFor } from './renderer-build';

/** The repository's root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A running monitor: engine, host, browser page (on a SQLite file unless opened with {@link MonitorAppOptions.database}). */
export interface MonitorApp<E extends Engine = SqliteEngine> {
  work: string;
  /** The built renderer the host serves (test/helpers/renderer-build.ts). */
  rendererDir: string;
  engine: E;
  server: RunningServer;
  context: BrowserContext;
  page: Page;
  /** Console errors and page errors seen so far. */
  errors: string[];
  /** A contract call through the host, as any HTTP client makes it; throws on a failed result. */
  api<T = unknown>(channel: string, input?: unknown): Promise<T>;
  close(): Promise<void>;
}

/** Options of {@link startMonitorApp}. */
export interface MonitorAppOptions {
  /** Workflow files to deploy, relative to the repository root. */
  workflows?: string[];
  engine?: EngineOptions;
  /** Runs on the engine before the host starts (e.g. inserting rows). */
  prepare?: (engine: SqliteEngine) => Promise<void> | void;
  viewport?: { width: number; height: number };
  /** Run the engine's worker loop in the host (default true). */
  hostWorker?: boolean;
}

/**
 * The monitor on another database (a `postgres://` URL) instead of a file; `prepare` gets the
 * engine as it is, without SQLite's handle.
 */
export async function startMonitorAppOn(
  database: string,
  options: Omit<MonitorAppOptions, 'prepare'> & { prepare?: (engine: Engine) => Promise<void> | void } = {},
): Promise<MonitorApp<Engine>> {
  return launch(Engine.open(database, { pollIntervalMs: 10, ...options.engine }), options);
}

/** Builds the renderer, opens an engine on a new file and a host, and opens the app in Chromium. */
export async function startMonitorApp(options: MonitorAppOptions = {}): Promise<MonitorApp> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'runnel-monitor-e2e-'));
  return launch(SqliteEngine.open(path.join(work, 'runnel.db'), { pollIntervalMs: 10, ...options.engine }), options, work);
}

/** Builds the renderer into `work` (a new temp dir unless given), then serves `engine` and opens the app in Chromium. */
async function launch<E extends Engine>(
  engine: E,
  options: Omit<MonitorAppOptions, 'prepare'> & { prepare?: (engine: E) => Promise<void> | void },
  given?: string,
): Promise<MonitorApp<E>> {
  const work = given ?? fs.mkdtempSync(path.join(os.tmpdir(), 'runnel-monitor-e2e-'));
  const rendererDir = await rendererFor(work);
  for (const file of options.workflows ?? [])
    await engine.deploy(JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')));
  await options.prepare?.(engine);
  const server = await startServer({
    engine,
    rendererDir,
    eventIntervalMs: 50,
    ...(options.hostWorker === false ? { startWorker: false } : {}),
  });
  const context = await chromium.launchPersistentContext(path.join(work, 'chromium-profile'), {
    executablePath: chromiumPath(),
    headless: true,
    viewport: options.viewport ?? { width: 1440, height: 1000 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url);
  // A marker that a reload or navigation would wipe: updates must arrive without either.
  await page.evaluate(() => ((globalThis as unknown as { __noReload: boolean }).__noReload = true));
  return {
    work,
    rendererDir,
    engine,
    server,
    context,
    page,
    errors,
    async api<T>(channel: string, input?: unknown): Promise<T> {
      const res = await fetch(`http://127.0.0.1:${server.port}/api/${channel}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json' },
        body: input === undefined ? '' : JSON.stringify(input),
      });
      const result = (await res.json()) as { ok: boolean; value?: T; error?: unknown };
      if (!result.ok) throw new Error(`${channel}: ${JSON.stringify(result.error)}`);
      return result.value as T;
    },
    async close() {
      await context.close().catch(() => undefined);
      await server.close();
      await engine.close();
      fs.rmSync(work, { recursive: true, force: true });
    },
  };
}

/** Whether the page was never reloaded since {@link startMonitorApp} opened it. */
export async function notReloaded(page: Page): Promise<boolean> {
  return (await page.evaluate(() => (globalThis as unknown as { __noReload?: boolean }).__noReload)) === true;
}

/** Polls `read` every 25 ms until it returns `want` (or fails with what it saw). */
export async function waitUntil<T>(
  read: () => Promise<T>,
  want: (v: T) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    try {
      last = await read();
      if (want(last)) return last;
    } catch {
      // the element may not exist yet
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}; last saw ${JSON.stringify(last)}`,
      );
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Waits until `locator`'s text is `text`. */
export function waitText(locator: Locator, text: string, timeoutMs = 20_000): Promise<string> {
  return waitUntil(
    () => locator.textContent({ timeout: 500 }).then((t) => (t ?? '').trim()),
    (t) => t === text,
    `text "${text}"`,
    timeoutMs,
  );
}

/** Unfolds the Instances view's start panel if it is folded (it is, by default, once instances exist). */
export async function openStartPanel(page: Page): Promise<void> {
  const toggle = page.getByTestId('start-toggle');
  await toggle.waitFor();
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await page.getByTestId('start-vars').waitFor();
}

/** Starts the sidebar-selected workflow from the UI's start panel; returns the new instance's id. */
export async function startFromUi(page: Page, workflow: string, variables = '{}'): Promise<number> {
  await page.getByTestId('nav-instances').click();
  if ((await page.getByTestId('instance-detail').count()) > 0) await page.getByTestId('detail-back').click();
  await page.getByTestId(`workflow-item-${workflow}`).click();
  await waitText(page.getByTestId('selected-workflow'), workflow);
  await openStartPanel(page);
  await page.getByTestId('start-vars').fill(variables);
  const before = await page
    .getByTestId('start-result')
    .textContent({ timeout: 200 })
    .catch(() => null);
  await page.getByTestId('start-instance').click();
  const text = await waitUntil(
    () => page.getByTestId('start-result').textContent({ timeout: 500 }),
    (t) => t !== null && t !== before && /#\d+/.test(t),
    `${workflow} to start`,
  );
  return Number(/#(\d+)/.exec(text ?? '')?.[1]);
}

/** Opens instance `id`'s detail from the Instances list (clearing any filter first). */
export async function openFromList(page: Page, id: number): Promise<void> {
  await page.getByTestId('nav-instances').click();
  if ((await page.getByTestId('instance-detail').count()) > 0) await page.getByTestId('detail-back').click();
  if (await page.getByTestId('filter-clear').isEnabled()) await page.getByTestId('filter-clear').click();
  await page.getByTestId(`instance-row-${id}`).click();
  await waitUntil(
    () => page.getByTestId('instance-detail').getAttribute('data-id', { timeout: 500 }),
    (v) => v === String(id),
    `the detail of #${id}`,
  );
}

/** What the page's elements offer to the callbacks below (typed here: tests compile without the DOM lib). */
interface PageElement {
  getAttribute(name: string): string | null;
  textContent: string | null;
  scrollHeight: number;
  scrollTo(options: { top: number }): void;
}

/** The attribute `name` of every element `locator` matches, in document order. */
export function attrOfAll(locator: Locator, name: string): Promise<(string | null)[]> {
  return locator.evaluateAll((els, n) => els.map((e) => (e as unknown as PageElement).getAttribute(n)), name);
}

/** The text of every element `locator` matches, in document order. */
export function textOfAll(locator: Locator): Promise<string[]> {
  return locator.evaluateAll((els) => els.map((e) => (e as unknown as PageElement).textContent ?? ''));
}

/** Ids of the instance rows on screen (`instance-row-<id>`), top to bottom. */
export async function rowIdsOnScreen(page: Page): Promise<number[]> {
  return (await attrOfAll(page.locator('[data-testid^="instance-row-"]'), 'data-testid')).map((t) =>
    Number((t ?? '').replace('instance-row-', '')),
  );
}

/** A computed style property of the first element `locator` matches. */
export function computedStyle(locator: Locator, property: string): Promise<string> {
  return locator.evaluate((el, p) => {
    const view = globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> };
    return view.getComputedStyle(el)[p] ?? '';
  }, property);
}

/** Scrolls the element `locator` matches to its end. */
export function scrollToEnd(locator: Locator): Promise<void> {
  return locator.evaluate((el) => {
    const e = el as unknown as PageElement;
    e.scrollTo({ top: e.scrollHeight });
  });
}
