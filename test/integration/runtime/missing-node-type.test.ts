/**
 * A workflow whose node type this process does not have is left to a worker that has it, while
 * every other instance on the file keeps running here (the worker says once why, and counts as
 * idle). Real database file shared by three engines in turn.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteEngine } from '../../../engine/runtime/engine';
import { runToSettled, tempDir } from '../../helpers/temp-engine';

describe('a workflow whose node type this process does not have', () => {
  it('is left to a worker that has it, while every other instance keeps running here', async () => {
    // given a file where another process deployed and started a workflow with a custom type
    const { dir, cleanup } = tempDir();
    const file = path.join(dir, 'runnel.db');
    const { createDefaultRegistry } = await import('../../../engine/nodes/registry');
    const { z } = await import('zod');
    const withPlugin = createDefaultRegistry({
      types: [{ type: 'csv.read', title: 'CSV', description: 'reads', icon: 'file', group: 'Data', configSchema: z.object({}).loose(), execute: () => Promise.resolve({ output: { rows: 3 } }) }],
    });
    const other = SqliteEngine.open(file, { registry: withPlugin, pollIntervalMs: 5 });
    const errors: string[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void errors.push(args.map(String).join(' '));
    try {
      await other.deploy({ name: 'plugin-flow', nodes: [{ id: 'extract', type: 'csv.read' }] });
      await other.deploy({ name: 'plain', nodes: [{ id: 'a', type: 'pass' }] });
      const pluginId = await other.start('plugin-flow');
      const plainId = await other.start('plain');
      await other.close();

      // when a worker without the plugin works the file
      const here = SqliteEngine.open(file, { pollIntervalMs: 5 });
      try {
        const plain = await runToSettled(here, plainId);
        // then the plain instance completed, the plugin one is untouched and waits, and the
        // worker said once why; it counts as idle (nothing it can run is left)
        expect(plain.status).toBe('COMPLETED');
        expect((await here.getInstance(pluginId))).toMatchObject({ status: 'PENDING' });
        expect((await here.getInstance(pluginId)).nodes[0]).toMatchObject({ status: 'READY', attempt: 0 });
        expect(errors.filter((e) => e.includes('cannot run workflow version'))).toHaveLength(1);
        expect((await here.isIdle())).toBe(true);
      } finally {
        await here.close();
      }

      // and a worker with the plugin runs it
      const later = SqliteEngine.open(file, { registry: withPlugin, pollIntervalMs: 5 });
      try {
        await later.runUntil(async () => (await later.getInstance(pluginId)).status === 'COMPLETED', 15_000);
        expect((await later.getInstance(pluginId)).variables).toEqual({});
      } finally {
        await later.close();
      }
    } finally {
      console.error = original;
      cleanup();
    }
  });
});
