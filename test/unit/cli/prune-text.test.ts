/**
 * prune's one-line summary (engine/cli/commands/retention.ts pruneText): what it deleted, and the
 * instances it kept for now and why. A newcomer's trial found "held back (a child instance still
 * live, another process on it, or history not yet read: 2)" hard to read.
 */
import { describe, expect, it } from 'vitest';
import { pruneText } from '../../../engine/cli/commands/retention';
import type { PruneReport } from '../../../engine/runtime/retention';

function report(heldBack: number, heldForHistory: number): PruneReport {
  return {
    deleted: { instances: 3, nodeStates: 6, schedule: 0, deadLetters: 0, history: 12, events: 0, children: 1 },
    byStatus: { COMPLETED: 2, FAILED: 1, CANCELLED: 0 },
    heldBack,
    heldForHistory,
    batches: 1,
    dryRun: false,
  };
}

const HEAD = 'deleted 3 instances (2 COMPLETED, 1 FAILED, 0 CANCELLED, child instances included) with 6 node states, 12 history rows, 0 schedule rows, 0 dead letters, 0 events';

describe('prune summary', () => {
  it('names what it kept for now, by reason, and nothing when it kept none', () => {
    expect(pruneText(report(0, 0))).toBe(HEAD);
    expect(pruneText(report(1, 0))).toBe(`${HEAD}; kept for now, with their child instances: 1 instance with a child instance still live or another process working on it`);
    expect(pruneText(report(2, 2))).toBe(`${HEAD}; kept for now, with their child instances: 2 instances whose history a change-feed consumer has not read yet`);
    expect(pruneText(report(5, 2))).toBe(
      `${HEAD}; kept for now, with their child instances: 3 instances with a child instance still live or another process working on it, and 2 instances whose history a change-feed consumer has not read yet`,
    );
  });
});
