/**
 * An instance id is never handed out twice (found in a newcomer's trial: after `runnel prune` or
 * `runnel delete` removed the newest instances, the next start got id 1 again, and a change-feed
 * consumer's copy took the new instance for the old one). On both backends (integration-pg too),
 * and across `runnel copy`, which carries the highest id ever handed out to the new database.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copyDatabase } from '../../../engine/db/copy';
import { Engine } from '../../../engine/runtime/engine';
import { runToSettled, tempDir, tempEngine, type TempEngine } from '../../helpers/temp-engine';

let t: TempEngine;
afterEach(async () => t.close());

const oneStep = { name: 'one', nodes: [{ id: 'a', type: 'pass', config: {} }] };

describe('instance ids', () => {
  it('are never reused after the newest instances were deleted (instance:delete, prune), nor after a copy', async () => {
    t = tempEngine({ retention: false });
    const { engine } = t;
    await engine.deploy(oneStep);
    const first = await engine.startMany('one', [{}, {}, {}]);
    for (const id of first) await runToSettled(engine, id);
    const newest = Math.max(...first);

    // the newest one deleted by hand: the next start gets a new id
    await engine.deleteInstance(newest);
    const next = await engine.start('one');
    expect(next).toBe(newest + 1);
    await runToSettled(engine, next);

    // every ended instance pruned: still above every id handed out
    const pruned = await engine.prune({ olderThanMs: 0 });
    expect(pruned.byStatus.COMPLETED).toBe(3);
    expect(await engine.listInstances({ limit: 10 })).toEqual([]);
    const after = await engine.start('one');
    expect(after).toBe(next + 1);
    await runToSettled(engine, after);
    await engine.deleteInstance(after);

    // a copy into a new SQLite file carries the highest id ever handed out
    const dir = tempDir();
    try {
      const copyFile = path.join(dir.dir, 'copy.db');
      await copyDatabase(t.file, copyFile);
      const copy = Engine.open(copyFile, { retention: false, pollIntervalMs: 10 });
      try {
        expect(await copy.start('one')).toBe(after + 1);
      } finally {
        await copy.close();
      }
    } finally {
      dir.cleanup();
    }
  });
});
