/**
 * Opening a 500-node, 600-edge workflow in the Designer (issue 4's performance check, the same
 * measure as test/e2e/designer/large-workflow.test.ts): the built renderer in real Chromium through the
 * browser host, the workflow picked in the sidebar `opens` times, each timed (page clock) from
 * the click until the canvas shows all its nodes, measured.
 */
import { BIG_EDGES, BIG_NODES, bigWorkflow, timeOpenWorkflow } from '../test/helpers/big-workflow';
import { chromiumPath, nodeAt, startDesignerApp } from '../test/helpers/designer-e2e';
import { nowMs } from './stats';

/** One open must not take longer than this, ms (the e2e test's bound is 8 s). */
const OPEN_TIMEOUT_MS = 30_000;

/** The designer figures, or why there are none. */
export type DesignerOpen =
  | {
      nodes: number;
      edges: number;
      /** Each open, ms, in order (the first is the cold one). */
      openMs: number[];
      medianMs: number;
      maxMs: number;
      /** Renderer build, engine, host, Chromium and the first page, ms (not part of the figure). */
      setupMs: number;
      chromium: string;
      /** Errors the page logged (none expected). */
      consoleErrors: string[];
    }
  | { unavailable: string };

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

const tenths = (ms: number) => Math.round(ms * 10) / 10;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Opens the large workflow `opens` times; never throws (a failure is the reason for n/a). */
export async function designerOpen(opens: number): Promise<DesignerOpen> {
  let chromium: string;
  try {
    chromium = chromiumPath();
  } catch {
    return { unavailable: 'Chromium not found: apt-get install -y chromium, or set CHROMIUM_PATH' };
  }
  const t0 = nowMs();
  let app: Awaited<ReturnType<typeof startDesignerApp>> | undefined;
  try {
    // "a-small" comes first in the list, so the Designer opens it; "big" is opened by the clicks.
    app = await startDesignerApp({
      deploy: [{ name: 'a-small', nodes: [{ id: 'a', type: 'pass' }] }, bigWorkflow()],
    });
    const { page } = app;
    await nodeAt(page, 'a').waitFor();
    const setupMs = nowMs() - t0;
    const openMs: number[] = [];
    for (let i = 0; i < opens; i++) {
      if (i > 0) {
        // Back to the small one, fully drawn, before the next open.
        await page.getByTestId('workflow-item-a-small').click();
        await page.locator('[data-testid="view-designer"][data-workflow="a-small"]').waitFor();
        await nodeAt(page, 'n0').waitFor({ state: 'detached' });
        await nodeAt(page, 'a').waitFor();
      }
      openMs.push(
        await withTimeout(timeOpenWorkflow(page, 'big', BIG_NODES), OPEN_TIMEOUT_MS, 'opening the workflow'),
      );
    }
    const edges = await page.locator('.react-flow__edge').count();
    if (edges !== BIG_EDGES) throw new Error(`the canvas shows ${edges} edges, expected ${BIG_EDGES}`);
    return {
      nodes: BIG_NODES,
      edges,
      openMs: openMs.map(tenths),
      medianMs: tenths(median(openMs)),
      maxMs: tenths(Math.max(...openMs)),
      setupMs: Math.round(setupMs),
      chromium,
      consoleErrors: app.consoleErrors,
    };
  } catch (err) {
    return { unavailable: `failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` };
  } finally {
    await app?.close().catch(() => undefined);
  }
}
