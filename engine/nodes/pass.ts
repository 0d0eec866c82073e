/**
 * The `pass` node type: shapes data without side effects.
 *
 * With `config.result` it completes with that value (templates already rendered, so
 * `{ "result": { "id": "{{ order.id }}" } }` builds a new object); without it, it hands its input
 * on unchanged, which together with the node's `input` and `output` mappings is enough to rename,
 * pick or merge variables.
 */
import { z } from 'zod';
import type { NodeType } from './types';

/**
 * Config of `pass`: `{ result?: unknown }`.
 *
 * Loose on purpose: the designer may keep notes or drafts beside `result`, and nothing else is
 * read, so an unknown key cannot be a silent typo of a setting.
 */
export const PassConfigSchema = z.looseObject({
  result: z.unknown().optional().describe('The value to complete with (default: the node input)'),
});

/** Parsed config of `pass`. */
export type PassConfig = z.output<typeof PassConfigSchema>;

/**
 * The `pass` node type.
 *
 * Output: `config.result` when given (not `undefined`), else the node input. Never fails.
 */
export const passNode: NodeType<PassConfig> = {
  type: 'pass',
  title: 'Pass',
  description: 'Passes its input on, or completes with a fixed result',
  icon: 'arrow-right',
  group: 'Core',
  configSchema: PassConfigSchema,
  instant: true,
  execute(ctx) {
    const output = ctx.config.result !== undefined ? ctx.config.result : ctx.input;
    return Promise.resolve({ output });
  },
};
