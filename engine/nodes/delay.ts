/**
 * The `delay` node type: waits for a duration or until a point in time.
 *
 * The handler only computes the absolute due time; the runtime parks the node WAITING with a
 * timer row at that time (DESIGN.md "Rules pinned": timers are rows with an absolute due time),
 * so a delay survives restarts and a clock moved backwards delays nothing already due.
 */
import { z } from 'zod';
import type { NodeType } from './types';

/** The longest `durationMs` a delay accepts: one year (365 days) in ms. */
export const MAX_DELAY_MS = 31_536_000_000;

function parseUntil(until: string | number): number {
  return typeof until === 'number' ? until : Date.parse(until);
}

/**
 * Config of `delay`: exactly one of
 * - `durationMs`: integer ms, 0 … {@link MAX_DELAY_MS}, counted from when the node starts;
 * - `until`: an ISO 8601 date-time string (read by `Date.parse`; without an offset it is local
 *   time, so give one, e.g. `2026-03-01T09:00:00Z`) or epoch ms.
 *
 * Errors name the field: both or neither given, `until` not a date.
 */
export const DelayConfigSchema = z
  .strictObject({
    durationMs: z
      .number()
      .int()
      .min(0)
      .max(MAX_DELAY_MS)
      .optional()
      .describe('How long to wait, in milliseconds'),
    until: z
      .union([z.string(), z.number().int().min(0)])
      .optional()
      .describe('When to resume: an ISO 8601 date-time (with offset) or epoch milliseconds'),
  })
  .refine((c) => (c.durationMs === undefined) !== (c.until === undefined), {
    message: 'give exactly one of durationMs or until',
  })
  .refine((c) => c.until === undefined || Number.isFinite(parseUntil(c.until)), {
    message: 'until must be an ISO 8601 date-time (e.g. 2026-03-01T09:00:00Z) or epoch milliseconds',
    path: ['until'],
  });

/** Parsed config of `delay`. */
export type DelayConfig = z.output<typeof DelayConfigSchema>;

/**
 * The `delay` node type.
 *
 * Returns `{ wait: { until }, output: { until } }` with `until` in epoch ms from the engine clock
 * (`ctx.now()`); an `until` already past becomes now, so the runtime completes the node at once.
 * One attempt by default: there is nothing to retry.
 */
export const delayNode: NodeType<DelayConfig> = {
  type: 'delay',
  title: 'Delay',
  description: 'Waits for a duration or until a point in time',
  icon: 'clock',
  group: 'Core',
  configSchema: DelayConfigSchema,
  defaultRetry: { maxAttempts: 1 },
  instant: true,
  execute(ctx) {
    const now = ctx.now();
    const { durationMs, until } = ctx.config;
    // The schema guarantees exactly one is set; the fallback keeps the type total.
    const due = durationMs !== undefined ? now + durationMs : parseUntil(until ?? now);
    const at = Math.max(now, due);
    return Promise.resolve({ wait: { until: at }, output: { until: at } });
  },
};
