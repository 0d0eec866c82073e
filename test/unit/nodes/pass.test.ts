import { describe, expect, it } from 'vitest';
import { PassConfigSchema, passNode, type PassConfig } from '../../../engine/nodes/pass';
import { makeContext } from '../../helpers/node-context';

describe('pass node', () => {
  it('hands its input on when no result is configured', async () => {
    const input = { order: { id: 7 }, tags: ['a'] };
    const ctx = makeContext<PassConfig>({ config: PassConfigSchema.parse({}), input });
    expect(await passNode.execute(ctx)).toEqual({ output: input });
  });

  it('completes with config.result when given, falsy values included', async () => {
    for (const result of [{ id: '🚀' }, 0, false, null, '']) {
      const ctx = makeContext<PassConfig>({
        config: PassConfigSchema.parse({ result }),
        input: { ignored: true },
      });
      expect(await passNode.execute(ctx)).toEqual({ output: result });
    }
  });

  it('its config is loose: other keys are kept, not refused', () => {
    expect(PassConfigSchema.parse({ result: 1, note: 'draft' })).toEqual({ result: 1, note: 'draft' });
  });
});
