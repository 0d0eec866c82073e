import { describe, expect, it } from 'vitest';
import {
  ApprovalConfigSchema,
  ApprovalDecisionSchema,
  ApprovalResultSchema,
  approvalNode,
  type ApprovalConfig,
} from '../../../engine/nodes/approval';
import { makeContext } from '../../helpers/node-context';

const NOW = Date.UTC(2026, 0, 1);

describe('approval node', () => {
  it('parks the node for a person, with prompt, assignee and form', async () => {
    const form = { type: 'object', properties: { reason: { type: 'string' } } };
    const ctx = makeContext<ApprovalConfig>({
      config: ApprovalConfigSchema.parse({ prompt: 'Ship firmware 2.1 to 🚗?', assignee: 'ops', form }),
    });
    expect(await approvalNode.execute(ctx)).toEqual({
      wait: { approval: true, prompt: 'Ship firmware 2.1 to 🚗?', assignee: 'ops', form },
    });
  });

  it('works with no config at all', async () => {
    const ctx = makeContext<ApprovalConfig>({ config: ApprovalConfigSchema.parse({}) });
    expect(await approvalNode.execute(ctx)).toEqual({ wait: { approval: true } });
  });

  it('runs once: no retries by default', () => {
    expect(approvalNode.defaultRetry).toEqual({ maxAttempts: 1 });
  });

  it('decision and result schemas take what a person submits and what the runtime records', () => {
    expect(ApprovalDecisionSchema.parse({ approved: true, actor: 'ana', data: { reason: 'ok' } })).toEqual({
      approved: true,
      actor: 'ana',
      data: { reason: 'ok' },
    });
    expect(ApprovalDecisionSchema.safeParse({ approved: 'yes' }).success).toBe(false);
    expect(ApprovalResultSchema.parse({ approved: false, comment: 'no', decidedAt: NOW })).toEqual({
      approved: false,
      comment: 'no',
      decidedAt: NOW,
    });
    expect(ApprovalResultSchema.safeParse({ approved: true }).success).toBe(false);
  });

  it('refuses unknown config keys', () => {
    const parsed = ApprovalConfigSchema.safeParse({ promt: 'typo' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.code).toBe('unrecognized_keys');
  });
});
