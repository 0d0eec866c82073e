/**
 * Retention and the SQLite file (SQLite only): a new file is made with auto_vacuum=INCREMENTAL and
 * a prune shrinks it with no VACUUM by hand; the history stays append-only for every other path
 * (migration 8's trigger); a file made before (auto_vacuum NONE) keeps its free pages until
 * `runnel vacuum` converts it, which is refused while another process has the file open.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteEngine } from '../../../engine/runtime/engine';
import { runCli, parseJson } from '../../helpers/cli';
import { createFileAtSchema } from '../../helpers/old-schema';
import { killChildren, spawnWorker } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp-engine';

const pragma = (file: string, name: string): number => {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma(name, { simple: true }) as number;
  } finally {
    db.close();
  }
};

/** `n` completed instances of a workflow whose one node keeps a 2 KB result. */
async function completed(engine: SqliteEngine, n: number): Promise<number[]> {
  await engine.deploy({ name: 'bulky', nodes: [{ id: 'p', type: 'pass', config: { output: { blob: 'x'.repeat(2000) } }, output: 'r' }] });
  const ids = await engine.startMany('bulky', Array.from({ length: n }, (_, i) => ({ i })));
  await engine.runUntil(async () => ((await engine.countByStatus({ workflow: 'bulky' })).COMPLETED ?? 0) === n, 60_000);
  return ids;
}

describe('retention and the file', () => {
  let tmp: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => {
    tmp = tempDir();
    file = path.join(tmp.dir, 'runnel.db');
  });
  afterEach(async () => {
    await killChildren();
    tmp.cleanup();
  });

  it('a new file is INCREMENTAL: pruning 90% shrinks it, with no free pages left and no VACUUM by hand', async () => {
    const engine = SqliteEngine.open(file, { retention: false });
    try {
      expect(engine.db.raw.pragma('auto_vacuum', { simple: true })).toBe(2);
      // The empty schema's pages (a page or more per table and index) are no data to shrink.
      engine.db.checkpoint('TRUNCATE');
      const floor = engine.db.raw.pragma('page_count', { simple: true }) as number;
      const ids = await completed(engine, 1000);
      engine.db.checkpoint('TRUNCATE');
      const before = engine.db.raw.pragma('page_count', { simple: true }) as number;
      // Keep the newest 10%: every instance older than the 100 last ones goes.
      const keep = ids.slice(-100);
      for (const id of ids.slice(0, -100)) await engine.deleteInstance(id);
      engine.db.checkpoint('TRUNCATE');
      const after = engine.db.raw.pragma('page_count', { simple: true }) as number;
      expect(engine.db.raw.pragma('freelist_count', { simple: true })).toBe(0);
      expect(after - floor).toBeLessThan((before - floor) * 0.3);
      expect((await engine.listInstances({ workflow: 'bulky', limit: 1000 })).map((i) => i.id).sort((a, b) => a - b)).toEqual(keep);
    } finally {
      await engine.close();
    }
  });

  it('history stays append-only outside the purge: a raw DELETE or UPDATE is refused', async () => {
    const engine = SqliteEngine.open(file, { retention: false });
    try {
      const [id] = await completed(engine, 1);
      const raw = engine.db.raw;
      expect(() => raw.prepare('DELETE FROM history WHERE instance_id = ?').run(id)).toThrow('history is append-only');
      expect(() => raw.prepare(`UPDATE history SET type = 'x' WHERE instance_id = ?`).run(id)).toThrow('history is append-only');
      // Marked, but not through the purge's transaction: an UPDATE is still refused.
      raw.prepare('UPDATE instance SET purging = 1 WHERE id = ?').run(id);
      expect(() => raw.prepare(`UPDATE history SET type = 'x' WHERE instance_id = ?`).run(id)).toThrow('history is append-only');
      // A workflow-level row (no instance) can never be deleted.
      raw.prepare(`INSERT INTO history (instance_id, node_id, type, at) VALUES (NULL, NULL, 'workflow.note', 1)`).run();
      expect(() => raw.prepare('DELETE FROM history WHERE instance_id IS NULL').run()).toThrow('history is append-only');
      expect(() => raw.prepare('UPDATE instance SET purging = 2 WHERE id = ?').run(id)).toThrow('CHECK constraint failed');
    } finally {
      await engine.close();
    }
  });

  it('a file made before keeps its free pages until runnel vacuum converts it; vacuum is refused while a worker has it open', async () => {
    createFileAtSchema(file, 6, Date.now());
    expect(pragma(file, 'auto_vacuum')).toBe(0);
    const engine = SqliteEngine.open(file, { retention: false });
    const ids = await completed(engine, 500);
    for (const id of ids) await engine.deleteInstance(id);
    engine.db.checkpoint('TRUNCATE');
    const free = engine.db.raw.pragma('freelist_count', { simple: true }) as number;
    expect(free).toBeGreaterThan(50);
    await engine.close();

    const worker = spawnWorker({ db: file, callLog: path.join(tmp.dir, 'calls.log'), exitWhenIdle: false, env: { RUNNEL_RETENTION: 'off' } });
    await worker.ready;
    const refused = await runCli('vacuum', '--db', file);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`DATABASE_BUSY: ${file} is open in another process (a worker, runnel serve, the desktop app): stop it, then run vacuum again; nothing was changed`);
    expect(pragma(file, 'auto_vacuum')).toBe(0);
    worker.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);

    const r = parseJson<{ converted: boolean; bytesBefore: number; bytesAfter: number }>(await runCli('vacuum', '--db', file, '--json'));
    expect(r.converted).toBe(true);
    expect(r.bytesAfter).toBeLessThan(r.bytesBefore);
    expect(pragma(file, 'auto_vacuum')).toBe(2);
    expect(pragma(file, 'freelist_count')).toBe(0);
    // Once converted, a second run only gives free pages back.
    expect(parseJson<{ converted: boolean }>(await runCli('vacuum', '--db', file, '--json')).converted).toBe(false);
    // The rows the old file held are all there.
    const reopened = SqliteEngine.open(file, { retention: false });
    try {
      expect((await reopened.listWorkflows()).length).toBeGreaterThan(0);
    } finally {
      await reopened.close();
    }
    expect((await runCli('check', '--db', file)).code).toBe(0);
  });
});
