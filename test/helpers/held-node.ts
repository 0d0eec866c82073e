/**
 * A node type for tests that need handler slots held: `held` attempts wait until the test lets
 * them go, then complete with `null`.
 */
import { z } from 'zod';
import type { NodeType } from '../../engine/nodes/types';

/** The `held` type and its control. */
export interface HeldNodes {
  type: NodeType<Record<string, never>>;
  /** Attempts waiting to be let go. */
  readonly waiting: number;
  /** Lets every waiting attempt complete, and every later one complete at once. */
  letGo(): void;
}

/** A new `held` node type (each test its own: the waiting attempts are kept here). */
export function heldNodes(): HeldNodes {
  const waiting: (() => void)[] = [];
  let open = false;
  return {
    type: {
      type: 'held',
      title: 'Held',
      description: 'Completes when the test lets it go',
      icon: 'clock',
      group: 'Test',
      configSchema: z.strictObject({}),
      execute: () => (open ? Promise.resolve({ output: null }) : new Promise((resolve) => waiting.push(() => resolve({ output: null })))),
    },
    get waiting() {
      return waiting.length;
    },
    letGo() {
      open = true;
      for (const go of waiting.splice(0)) go();
    },
  };
}
