/**
 * The large workflow of the Designer's performance check (issue 4: 500 nodes, 600 edges), and
 * the timing of its opening in the page. Shared by test/e2e/designer/large-workflow.test.ts and the
 * benchmark (bench/designer.ts), so both measure the same thing.
 */
import type { Page } from 'playwright-core';

/** Nodes and edges of the performance check's workflow. */
export const BIG_NODES = 500;
export const BIG_EDGES = 600;

/** A valid DAG named `big` of `nodeCount` nodes (every built-in type) and `edgeCount` edges, laid out on a grid. */
export function bigWorkflow(nodeCount = BIG_NODES, edgeCount = BIG_EDGES): Record<string, unknown> {
  const kinds = [
    { type: 'pass' },
    { type: 'delay', config: { durationMs: 10 } },
    { type: 'http', config: { method: 'GET', url: 'https://example.test/{{ id }}' }, retry: { maxAttempts: 3 }, timeoutMs: 5000 },
    { type: 'script', config: { code: 'return input;' } },
    { type: 'approval', config: { prompt: 'ok?' } },
  ];
  const nodes = [];
  const positions: Record<string, { x: number; y: number }> = {};
  for (let i = 0; i < nodeCount; i++) {
    const id = `n${i}`;
    nodes.push({ id, name: `Step ${i}`, ...kinds[i % kinds.length] });
    positions[id] = { x: (i % 25) * 260, y: Math.floor(i / 25) * 140 };
  }
  const edges: Array<Record<string, unknown>> = [];
  const seen = new Set<string>();
  const add = (from: number, to: number, when?: string) => {
    const key = `${from}>${to}`;
    if (from >= to || seen.has(key)) return false;
    seen.add(key);
    edges.push(when === undefined ? { from: `n${from}`, to: `n${to}` } : { from: `n${from}`, to: `n${to}`, when });
    return true;
  };
  for (let i = 1; i < nodeCount; i++) add(i - 1, i, i % 10 === 0 ? `x > ${i}` : undefined);
  for (let i = 0; edges.length < edgeCount; i++) add(i % nodeCount, (i * 7 + 25) % nodeCount);
  return { name: 'big', nodes, edges, ui: { positions } };
}

/**
 * Picks workflow `name` in the Designer's sidebar and returns the milliseconds (page clock) until
 * the canvas shows all `count` of its nodes, measured.
 */
export function timeOpenWorkflow(page: Page, name: string, count: number): Promise<number> {
  return page.evaluate(
    async ({ name, count }) => {
      const t0 = performance.now();
      (document.querySelector(`[data-testid="workflow-item-${name}"]`) as HTMLElement).click();
      // A check each frame. No named functions in here: tsx (the benchmark) would wrap them in
      // a `__name` helper the page does not have.
      for (;;) {
        await new Promise((r) => requestAnimationFrame(r));
        const nodes = document.querySelectorAll('.react-flow__node');
        // React Flow shows a node once it is measured; the last one measured means all are.
        const last = nodes[nodes.length - 1] as HTMLElement | undefined;
        if (nodes.length === count && last && last.style.visibility !== 'hidden') return performance.now() - t0;
      }
    },
    { name, count },
  );
}
