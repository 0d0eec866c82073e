/**
 * The workflows and the one custom node type the benchmark runs.
 *
 * Every node is a no-op or `bench-flaky` (fails its first attempts, then passes), so the figures
 * measure the engine's own cost per transition, not a handler's work. The no-op is `pass`
 * completing with `null`, like the raw pattern's step, which stores no result: a bare `pass`
 * hands its input on, i.e. stores a copy of the ~200 B of variables as each node's result —
 * data the workflow asked for, measured apart ({@link LINEAR4_ECHO}).
 */
import { z } from 'zod';
import { createDefaultRegistry, type NodeRegistry } from '../engine/nodes/registry';
import type { NodeType } from '../engine/nodes/types';
import type { WorkflowInput } from '../engine/dsl/schema';

/** ~200 bytes of variables, as in the raw pattern of anchors-performance.md. */
export function benchVariables(i: number): Record<string, unknown> {
  return {
    orderId: `order-${String(i).padStart(8, '0')}`,
    customer: { id: 1000 + (i % 977), tier: i % 3 === 0 ? 'gold' : 'standard', region: 'eu-west' },
    items: [
      { sku: 'SKU-001', qty: 1 + (i % 4) },
      { sku: 'SKU-002', qty: 2 },
    ],
    total: 100 + (i % 50),
    note: 'benchmark payload padding to about two hundred bytes',
  };
}

const FlakyConfigSchema = z.strictObject({ failures: z.number().int().min(0) });

/**
 * `bench-flaky`: fails attempts 1…`failures` with a retryable error, then completes.
 *
 * Its state is the attempt number the engine passes in, so it works across processes.
 */
export const flakyNode: NodeType<z.output<typeof FlakyConfigSchema>> = {
  type: 'bench-flaky',
  title: 'Benchmark flaky step',
  description: 'Fails its first attempts, then passes (benchmark only)',
  icon: 'alert',
  group: 'Benchmark',
  configSchema: FlakyConfigSchema,
  execute(ctx) {
    if (ctx.attempt <= ctx.config.failures) {
      return Promise.reject(new Error(`planned failure ${ctx.attempt} of ${ctx.config.failures}`));
    }
    return Promise.resolve({ output: { attempt: ctx.attempt } });
  },
};

/** The built-ins plus `bench-flaky`. */
export function benchRegistry(): NodeRegistry {
  return createDefaultRegistry().register(flakyNode);
}

/** A no-op node: `pass` completing with `null`. */
function noop(id: string) {
  return { id, type: 'pass', config: { result: null } };
}

/** (a) three no-op nodes in a line: a → b → c. */
export const LINEAR: WorkflowInput = {
  name: 'bench-linear',
  nodes: [noop('a'), noop('b'), noop('c')],
  edges: [
    { from: 'a', to: 'b' },
    { from: 'b', to: 'c' },
  ],
};

/** The raw footprint's shape: four no-op nodes in a line (bytes per completed instance). */
export const LINEAR4: WorkflowInput = {
  name: 'bench-linear4',
  nodes: ['a', 'b', 'c', 'd'].map(noop),
  edges: [
    { from: 'a', to: 'b' },
    { from: 'b', to: 'c' },
    { from: 'c', to: 'd' },
  ],
};

/** {@link LINEAR4} with bare `pass` nodes: each stores its input (the variables) as its result. */
export const LINEAR4_ECHO: WorkflowInput = {
  ...LINEAR4,
  name: 'bench-linear4-echo',
  nodes: ['a', 'b', 'c', 'd'].map((id) => ({ id, type: 'pass' })),
};

/** The limit of {@link LINEAR_CAPPED}: well below the instances a throughput run starts. */
export const CAPPED_LIMIT = 200;

/**
 * {@link LINEAR} under a concurrency limit ({@link CAPPED_LIMIT}): all but the first 200
 * instances start held, and each end admits the next (issue 13's figure: ≥ 0.8× without).
 */
export const LINEAR_CAPPED: WorkflowInput = { ...LINEAR, name: 'bench-linear-capped', concurrency: { limit: CAPPED_LIMIT } };

/** Branches of {@link FANOUT}. */
export const FANOUT_WIDTH = 10;

/** (b) a fan-out of ten `pass` branches joined again: start → b1…b10 → join (join: all). */
export const FANOUT: WorkflowInput = {
  name: 'bench-fanout',
  nodes: [
    noop('start'),
    ...Array.from({ length: FANOUT_WIDTH }, (_, i) => noop(`b${i + 1}`)),
    { ...noop('join'), join: 'all' as const },
  ],
  edges: Array.from({ length: FANOUT_WIDTH }, (_, i) => [
    { from: 'start', to: `b${i + 1}` },
    { from: `b${i + 1}`, to: 'join' },
  ]).flat(),
};

/** Attempts of the middle node of {@link RETRY} that fail before it passes. */
export const RETRY_FAILURES = 2;

/**
 * (c) a → flaky → c, where `flaky` fails twice and passes on its third attempt; its retries go
 * through `schedule` with no backoff (initialIntervalMs 0), so the run is throughput-bound.
 */
export const RETRY: WorkflowInput = {
  name: 'bench-retry',
  nodes: [
    noop('a'),
    {
      id: 'flaky',
      type: 'bench-flaky',
      config: { failures: RETRY_FAILURES },
      retry: { maxAttempts: RETRY_FAILURES + 1, initialIntervalMs: 0 },
    },
    noop('c'),
  ],
  edges: [
    { from: 'a', to: 'flaky' },
    { from: 'flaky', to: 'c' },
  ],
};

/** Keeps an instance live for a day: one `delay` node, whose timer row stays in `schedule`. */
export const HOLD: WorkflowInput = {
  name: 'bench-hold',
  nodes: [{ id: 'wait', type: 'delay', config: { durationMs: 86_400_000 } }],
  edges: [],
};

/** Node attempts (transitions) one instance of each workflow makes. */
export const TRANSITIONS_PER_INSTANCE = {
  'bench-linear': 3,
  'bench-linear-capped': 3,
  'bench-linear4': 4,
  'bench-linear4-echo': 4,
  'bench-fanout': FANOUT_WIDTH + 2,
  'bench-retry': 3 + RETRY_FAILURES,
  'bench-hold': 1,
} as const;
