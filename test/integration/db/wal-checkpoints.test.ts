/**
 * WAL checkpoints run on the upkeep thread (engine/db/upkeep-thread.ts) while the worker runs:
 * committed pages reach the database file between the worker's commits, and the thread stops
 * with the worker. Real database file, its size read from disk.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { tempSqliteEngine } from '../../helpers/temp-engine';

describe('WAL checkpoints on their own thread while the worker runs', () => {
  let ctx: ReturnType<typeof tempSqliteEngine>;
  afterEach(async () => ctx.close());

  it('copies committed pages into the database file between the worker\'s commits, and stops with the worker', async () => {
    // An automatic checkpoint far away: only the thread can have copied pages into the file.
    ctx = tempSqliteEngine({ walAutocheckpoint: 100_000 });
    const { engine, file } = ctx;
    await engine.deploy({ name: 'one', nodes: [{ id: 'a', type: 'pass' }] });
    engine.db.checkpoint('TRUNCATE');
    const before = fs.statSync(file).size;
    engine.startWorker();
    const ids = await engine.startMany('one', Array.from({ length: 300 }, (_, i) => ({ i, pad: 'x'.repeat(200) })));
    const last = ids[ids.length - 1] ?? 0;
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + 10_000;
      const poll = async () => {
        if ((await engine.isSettled(last)) && fs.statSync(file).size > before + 64 * 1024) resolve();
        else if (Date.now() > deadline) reject(new Error(`database file stayed at ${fs.statSync(file).size} bytes (was ${before})`));
        else setTimeout(() => void poll(), 20);
      };
      void poll();
    });
    expect(fs.statSync(file).size).toBeGreaterThan(before + 64 * 1024);
    // Stopping the worker stops the thread: nothing is left to keep the process alive.
    await engine.stopWorker();
    const size = fs.statSync(file).size;
    await engine.start('one', {});
    await new Promise((r) => setTimeout(r, 100));
    expect(fs.statSync(file).size).toBe(size);
  });
});
