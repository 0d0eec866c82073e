/**
 * The Designer in real Chromium through the browser host, for e2e tests and scripts: one built
 * renderer, one engine on a temp file (built-in types plus the examples' custom ones), one host,
 * one browser page per call; and the moves a person makes (drag from the palette, connect two
 * handles, type into a property, export through the download).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { Result } from '../../engine/api/contract';
import { createDefaultRegistry } from '../../engine/nodes/registry';
import { SqliteEngine } from '../../engine/runtime/engine';
import { register as registerPipelineNodes } from '../../examples/pipeline-nodes';
import { chromiumPath } from '../../scripts/chromium';
import { startServer, type RunningServer } from '../../server/index';
import { rendererFor } from './renderer-build';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The example workflows (`examples/<name>.workflow.json`). */
export const EXAMPLES = ['csv-pipeline', 'ota-upgrade', 'purchase-approval'] as const;

/** An example workflow's file text. */
export function exampleText(name: string): string {
  return fs.readFileSync(path.join(ROOT, 'examples', `${name}.workflow.json`), 'utf8');
}

/** The Chromium the tests drive (scripts/chromium.ts decides; bench/designer.ts asks here too). */
export { chromiumPath };

/** A running app: engine, host, browser page. */
export interface DesignerApp {
  work: string;
  engine: SqliteEngine;
  server: RunningServer;
  context: BrowserContext;
  page: Page;
  /** Page errors and console errors seen so far. */
  consoleErrors: string[];
  /** A contract call through the host; throws on a failed result. */
  api<T>(channel: string, input?: unknown): Promise<T>;
  /** A contract call through the host, the Result as is. */
  call<T>(channel: string, input?: unknown): Promise<Result<T>>;
  close(): Promise<void>;
}

/** Options of {@link startDesignerApp}. */
export interface DesignerAppOptions {
  /** Workflows saved before the page opens (definitions). */
  deploy?: unknown[];
  /** Viewport (default 1600 × 1000). */
  viewport?: { width: number; height: number };
}

/**
 * Builds the renderer into a temp folder, opens an engine there, serves both, and opens the app
 * in headless Chromium on the Designer tab.
 */
export async function startDesignerApp(options: DesignerAppOptions = {}): Promise<DesignerApp> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'runnel-designer-'));
  // RUNNEL_E2E_NO_MINIFY=1 keeps names readable for a profile.
  const rendererDir = await rendererFor(work);
  const registry = createDefaultRegistry();
  registerPipelineNodes(registry);
  const engine = SqliteEngine.open(path.join(work, 'runnel.db'), { registry, pollIntervalMs: 10 });
  for (const d of options.deploy ?? []) await engine.deploy(d);
  const server = await startServer({ engine, rendererDir, eventIntervalMs: 50 });
  const context = await chromium.launchPersistentContext(path.join(work, 'chromium-profile'), {
    executablePath: chromiumPath(),
    headless: true,
    viewport: options.viewport ?? { width: 1600, height: 1000 },
    acceptDownloads: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  // Fail fast: every step of these tests takes well under a second.
  page.setDefaultTimeout(8000);
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(e.message));
  await page.goto(server.url);
  await page.getByTestId('nav-designer').click();
  await page.getByTestId('view-designer').waitFor();
  await page.getByTestId('palette-item-pass').waitFor();

  const call = async <T>(channel: string, input?: unknown): Promise<Result<T>> => {
    const res = await fetch(`http://127.0.0.1:${server.port}/api/${channel}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json' },
      body: input === undefined ? '' : JSON.stringify(input),
    });
    return (await res.json()) as Result<T>;
  };
  return {
    work,
    engine,
    server,
    context,
    page,
    consoleErrors,
    call,
    async api<T>(channel: string, input?: unknown): Promise<T> {
      const r = await call<T>(channel, input);
      if (!r.ok) throw new Error(`${channel}: ${r.error.code}: ${r.error.message}`);
      return r.value;
    },
    async close() {
      await context.close().catch(() => undefined);
      await server.close();
      await engine.close();
      fs.rmSync(work, { recursive: true, force: true });
    },
  };
}

/** The canvas node `id` (React Flow's wrapper). */
export function nodeAt(page: Page, id: string) {
  return page.locator(`.react-flow__node[data-id="${cssString(id)}"]`);
}

/** `s` quoted for a CSS attribute selector's double-quoted string. */
export function cssString(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

/** Width of the properties drawer over the canvas's right side, px (PANEL_WIDTH). */
export const DRAWER = 320;

/**
 * The centre of the part of the canvas the properties drawer never covers, in page
 * coordinates (a node is selected, and the drawer open, after every drop).
 */
export async function canvasCentre(page: Page): Promise<{ x: number; y: number }> {
  const box = await page.getByTestId('designer-canvas').boundingBox();
  if (!box) throw new Error('no canvas');
  return { x: box.x + (box.width - DRAWER) / 2, y: box.y + box.height / 2 };
}

/**
 * Drags palette item `type` onto the canvas at `at` (page coordinates; default the centre) and
 * returns the new node's id (the one selected afterwards).
 */
export async function dragFromPalette(page: Page, type: string, at?: { x: number; y: number }): Promise<string> {
  const before = new Set(await page.locator('.react-flow__node').evaluateAll((els) => els.map((e) => e.getAttribute('data-id'))));
  const target = at ?? (await canvasCentre(page));
  const box = await page.getByTestId('designer-canvas').boundingBox();
  if (!box) throw new Error('no canvas');
  await page.getByTestId(`palette-item-${type}`).dragTo(page.getByTestId('designer-canvas'), { targetPosition: { x: target.x - box.x, y: target.y - box.y } });
  let id: string | undefined;
  for (let i = 0; i < 100 && id === undefined; i++) {
    const now = await page.locator('.react-flow__node').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')));
    id = now.find((x): x is string => x !== null && !before.has(x));
    if (id === undefined) await page.waitForTimeout(20);
  }
  if (id === undefined) throw new Error(`dropping ${type} made no node`);
  return id;
}

/**
 * Waits until the canvas's view has not moved for `quietMs` (its transform unchanged). A selection
 * beside the properties drawer moves the view clear of it 150 ms later, over 200 ms
 * (renderer/src/designer/Canvas.tsx): a pointer gesture aimed from positions read before that move
 * lands elsewhere. On a loaded machine the move can start after Playwright's own stability check.
 */
export async function waitForStillView(page: Page, quietMs = 300): Promise<void> {
  await page.waitForFunction(
    (quiet) => {
      const w = window as unknown as { rnViewT?: string; rnViewSince?: number };
      const t = (document.querySelector('.react-flow__viewport') as HTMLElement | null)?.style.transform ?? '';
      if (w.rnViewT !== t || w.rnViewSince === undefined) {
        w.rnViewT = t;
        w.rnViewSince = performance.now();
        return false;
      }
      return performance.now() - w.rnViewSince >= quiet;
    },
    quietMs,
    { polling: 50 },
  );
}

/** Moves the mouse from node `from`'s output (or error output) handle onto node `to`'s input, holding the button; `release` ends it. */
export async function dragConnection(page: Page, from: string, to: string, options: { handle?: 'out' | 'error'; release?: boolean } = {}): Promise<void> {
  const handle = options.handle ?? 'out';
  await waitForStillView(page);
  const a = await nodeAt(page, from).locator(`.react-flow__handle[data-handleid="${handle}"]`).boundingBox();
  const b = await nodeAt(page, to).locator('.react-flow__handle[data-handleid="in"]').boundingBox();
  if (!a || !b) throw new Error(`no handles for ${from} → ${to}`);
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 12 });
  if (options.release !== false) await page.mouse.up();
}

/** Connects two nodes by dragging handle to handle. */
export async function connect(page: Page, from: string, to: string, handle: 'out' | 'error' = 'out'): Promise<void> {
  await dragConnection(page, from, to, { handle });
}

/** Selects node `id` alone by clicking it. */
export async function selectNode(page: Page, id: string): Promise<void> {
  const selected = page.locator(`[data-testid="properties-panel"][data-selection="node"][data-node="${cssString(id)}"]`);
  // A click can land where the node was when the view moves under it (see waitForStillView):
  // then it selected something else, or nothing, and it is made again once the view is still.
  for (let attempt = 1; ; attempt++) {
    // A click on a node of a multi-selection keeps the selection (to drag it): clear it first.
    if ((await page.locator('[data-testid="properties-panel"][data-selection="many"]').count()) > 0) await clickPane(page);
    await nodeAt(page, id).click();
    try {
      await selected.waitFor({ timeout: attempt < 3 ? 3000 : undefined });
      return;
    } catch (err) {
      if (attempt >= 3) throw err;
      await waitForStillView(page);
    }
  }
}

/** Renames the selected node through the properties panel's id field. */
export async function renameSelected(page: Page, newId: string): Promise<void> {
  const field = page.getByTestId('prop-id');
  await field.fill(newId);
  await field.press('Enter');
  await nodeAt(page, newId).waitFor();
}

/** Drops a node of `type` and gives it id `id`; returns the id. */
export async function addNode(page: Page, type: string, id: string, at?: { x: number; y: number }): Promise<string> {
  const made = await dragFromPalette(page, type, at);
  await selectNode(page, made);
  if (made !== id) await renameSelected(page, id);
  return id;
}

/** Clicks the empty canvas (clears the selection: the panel shows the workflow). */
export async function clickPane(page: Page): Promise<void> {
  await page.locator('.react-flow__pane').click({ position: { x: 8, y: 8 } });
}

/** Clears the selection and shows the workflow's own settings (name, description, input, …). */
export async function openWorkflowSettings(page: Page): Promise<void> {
  await clickPane(page);
  if ((await page.getByTestId('workflow-settings').getAttribute('aria-pressed')) !== 'true') await page.getByTestId('workflow-settings').click();
  await page.locator('[data-testid="properties-panel"][data-selection="workflow"]').waitFor();
}

/** Exports through the toolbar (a browser download) and returns the file's text. */
export async function exportViaUi(page: Page): Promise<string> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-workflow').click()]);
  const file = await download.path();
  return fs.readFileSync(file, 'utf8');
}

/** Imports `text` through the toolbar's import dialog (paste) and waits until it is drawn. */
export async function importViaUi(page: Page, text: string): Promise<void> {
  await page.getByTestId('import-workflow').click();
  await page.getByTestId('import-text').fill(text);
  await page.getByTestId('import-confirm').click();
  const discard = page.getByTestId('unsaved-discard');
  if (await discard.isVisible().catch(() => false)) await discard.click();
  await page.getByTestId('import-dialog').waitFor({ state: 'detached' });
}

/** Saves through the toolbar and waits for the message saying so. */
export async function saveViaUi(page: Page): Promise<string> {
  const box = page.getByTestId('designer-message');
  const before = (await box.count()) > 0 ? await box.getAttribute('data-seq') : null;
  await page.getByTestId('save-workflow').click();
  await page.locator(`[data-testid="designer-message"]:not([data-seq="${before ?? ''}"])`).waitFor();
  return (await page.getByTestId('designer-message-text').textContent()) ?? '';
}
