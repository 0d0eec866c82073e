/**
 * The `approval` node type: waits for a person to decide.
 *
 * The handler only parks the node; the decision arrives through the API (`instance:approve`) or
 * the CLI, and the runtime makes it the node's result. Both schemas the runtime needs for that
 * live here, beside the type, so the decision's shape has one owner.
 */
import { z } from 'zod';
import type { NodeType } from './types';

/**
 * Config of `approval`.
 *
 * - `prompt`: what the person is asked (shown in the UI and CLI);
 * - `assignee`: who should decide (a name or role; informational, not enforced);
 * - `form`: JSON Schema of the data a person may attach to the decision.
 */
export const ApprovalConfigSchema = z.strictObject({
  prompt: z.string().max(10_000).optional().describe('What the person is asked'),
  assignee: z.string().max(200).optional().describe('Who should decide (a name or role)'),
  form: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('JSON Schema of the data a person may attach to the decision'),
});

/** Parsed config of `approval`. */
export type ApprovalConfig = z.output<typeof ApprovalConfigSchema>;

/**
 * A decision as a person submits it (the payload of `instance:approve`).
 *
 * `data` should match the node's `form` schema when one is given; `actor` is who decided.
 */
export const ApprovalDecisionSchema = z.object({
  approved: z.boolean(),
  data: z.unknown().optional(),
  actor: z.string().optional(),
  comment: z.string().optional(),
});

/** A decision as submitted: see {@link ApprovalDecisionSchema}. */
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;

/**
 * The result an approval node completes with: the decision plus `decidedAt` (epoch ms, engine
 * clock), stamped by the runtime when it records the decision.
 */
export const ApprovalResultSchema = ApprovalDecisionSchema.extend({
  decidedAt: z.number().int(),
});

/** An approval node's result: see {@link ApprovalResultSchema}. */
export type ApprovalResult = z.infer<typeof ApprovalResultSchema>;

/**
 * The `approval` node type.
 *
 * Returns `{ wait: { approval: true, prompt?, assignee?, form? } }`. One attempt by default:
 * re-asking a person is a manual action, not a retry.
 */
export const approvalNode: NodeType<ApprovalConfig> = {
  type: 'approval',
  title: 'Approval',
  description: 'Waits for a person to approve or reject',
  icon: 'check',
  group: 'Human',
  configSchema: ApprovalConfigSchema,
  defaultRetry: { maxAttempts: 1 },
  instant: true,
  timeoutBoundsWait: true,
  execute(ctx) {
    const { prompt, assignee, form } = ctx.config;
    return Promise.resolve({
      wait: {
        approval: true as const,
        ...(prompt !== undefined && { prompt }),
        ...(assignee !== undefined && { assignee }),
        ...(form !== undefined && { form }),
      },
    });
  },
};
