/**
 * The Database view's channels (issue 14): `database:info` (sizes, instances by age, retention,
 * consumers), `database:check`, `database:backup` and `database:vacuum` with their
 * `operation.progress` events — on a real SQLite file, and on PostgreSQL (integration-pg), where
 * info answers without a file and the file operations are refused with what to use instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Channel, Input, Output, Result } from '../../../engine/api/contract';
import { createHandlers, dispatch } from '../../../engine/api/handlers';
import { ManualClock } from '../../../engine/runtime/clock';
import type { SqliteEngine } from '../../../engine/runtime/engine';
import type { EngineEvent } from '../../../engine/runtime/events';
import { runToSettled, TEST_BACKEND, tempEngine, type TempEngine } from '../../helpers/temp-engine';

const DAY = 86_400_000;
let t: TempEngine;
let clock: ManualClock;
let call: <C extends Channel>(channel: C, input?: Input<C>) => Promise<Result<Output<C>>>;
let progress: Extract<EngineEvent, { type: 'operation.progress' }>[];

async function value<C extends Channel>(channel: C, input?: Input<C>): Promise<Output<C>> {
  const r = await call(channel, input);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value;
}

beforeEach(() => {
  clock = new ManualClock(Date.UTC(2026, 10, 1));
  t = tempEngine({ clock, retention: { completedDays: 10 } });
  const handlers = createHandlers(t.engine);
  call = (channel, input) => dispatch(handlers, channel, input) as never;
  progress = [];
  t.engine.on((e) => {
    if (e.type === 'operation.progress') progress.push(e);
  });
});
afterEach(async () => t.close());

const oneStep = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  nodes: [{ id: 'a', type: 'pass', config: {} }],
  edges: [],
  ...extra,
});

describe('database:info', () => {
  it('counts instances by age (live since created, ended since they ended), and names the retention in force and the consumers', async () => {
    // given: a workflow with a policy of its own and one without; instances created 40, 8 and 0 days ago
    await t.engine.deploy(oneStep('kept', { retention: { completedDays: 2 } }));
    await t.engine.deploy(oneStep('plain'));
    await t.engine.deploy({ name: 'asks', nodes: [{ id: 'ask', type: 'approval', config: {} }], edges: [] });
    const t0 = clock.now();
    const old = await t.engine.start('plain');
    await runToSettled(t.engine, old);
    const waiting = await t.engine.start('asks');
    await runToSettled(t.engine, waiting);
    clock.set(t0 + 32 * DAY);
    const week = await t.engine.start('kept');
    await runToSettled(t.engine, week);
    clock.set(t0 + 40 * DAY - DAY / 2);
    const today = await t.engine.start('asks');
    await runToSettled(t.engine, today);
    await value('changes:ack', { consumer: 'export', cursor: 3 });
    clock.set(t0 + 40 * DAY);

    // when
    const info = await value('database:info');

    // then: the ended ones by the time since they ended, the live ones since they were created
    expect(info.ages).toEqual([
      { age: 'day', live: 1, ended: 0 },
      { age: 'week', live: 0, ended: 0 },
      { age: 'month', live: 0, ended: 1 },
      { age: 'older', live: 1, ended: 1 },
    ]);
    expect(info.retention).toEqual({
      enabled: true,
      defaults: { completedDays: 10, failedDays: null, cancelledDays: 30 },
      workflows: [{ name: 'kept', policy: { completedDays: 2, failedDays: null, cancelledDays: 30 } }],
    });
    expect(info.consumers).toEqual({ count: 1, lowestCursor: 3 });
    expect(info.backend).toBe(TEST_BACKEND);
    if (TEST_BACKEND === 'sqlite') {
      expect(info.location).toBe(path.resolve(t.file));
      const f = info.file;
      expect(f).toBeDefined();
      expect(f?.pageSize).toBe(4096);
      expect(f?.autoVacuum).toBe('incremental');
      expect(f?.pageCount).toBeGreaterThan(10);
      expect(f?.bytes).toBe(fs.statSync(t.file).size);
      expect(info.health.wal?.limitBytes).toBeGreaterThan(0);
    } else {
      expect(info.file).toBeUndefined();
      expect(info.location).not.toContain('password');
    }
  });
});

if (TEST_BACKEND === 'sqlite') {
  describe('database:backup, database:check, database:vacuum on a SQLite file', () => {
    it('backs the file up with progress to its end, and the copy opens with every instance; an existing dest needs force', async () => {
      await t.engine.deploy(oneStep('plain'));
      const ids = await t.engine.startMany(
        'plain',
        Array.from({ length: 50 }, (_, i) => ({ i, pad: 'x'.repeat(2000) })),
      );
      for (const id of ids) await runToSettled(t.engine, id);
      const dest = path.join(t.dir, 'copy.db');

      const r = await value('database:backup', { dest });

      expect(r.dest).toBe(dest);
      expect(r.bytes).toBe(fs.statSync(dest).size);
      const last = progress[progress.length - 1];
      expect(last).toMatchObject({ operation: 'backup', unit: 'bytes' });
      expect(last?.done).toBe(last?.total);
      const copy = new Database(dest, { readonly: true });
      try {
        expect(
          (
            copy.prepare(`SELECT count(*) AS n FROM instance WHERE status = 'COMPLETED'`).get() as {
              n: number;
            }
          ).n,
        ).toBe(50);
      } finally {
        copy.close();
      }
      // the same dest again: refused, unless forced
      expect(await call('database:backup', { dest })).toMatchObject({
        ok: false,
        error: { code: 'CONFLICT' },
      });
      expect(await call('database:backup', { dest, force: true })).toMatchObject({ ok: true });
      expect(await call('database:backup', { dest: t.file })).toMatchObject({
        ok: false,
        error: { code: 'INVALID_INPUT' },
      });
    });

    it('checks the file: ok with the counts, and a violation is data naming it', async () => {
      await t.engine.deploy(oneStep('plain'));
      const id = await t.engine.start('plain');
      await runToSettled(t.engine, id);

      const good = await value('database:check');
      expect(good).toMatchObject({ ok: true, violations: [], counts: { instances: 1, live: 0 } });

      // an orphan schedule row (its instance ended): the engine's invariant, reported
      const raw = (t.engine as SqliteEngine).db.raw;
      raw
        .prepare(
          `INSERT INTO schedule (instance_id, node_id, kind, next_run_at, retry_count, created_at) VALUES (?, 'a', 'run', 0, 0, 0)`,
        )
        .run(id);
      const bad = await value('database:check');
      expect(bad.ok).toBe(false);
      expect(bad.violations.map((v) => v.kind)).toContain('ORPHAN_SCHEDULE_ROW');
    });

    it('gives free pages back while the engine is open, with progress from 0 to all of them', async () => {
      const raw = (t.engine as SqliteEngine).db.raw;
      raw.exec(`CREATE TABLE scratch (x TEXT)`);
      const insert = raw.prepare(`INSERT INTO scratch VALUES (?)`);
      raw.transaction(() => {
        for (let i = 0; i < 3000; i++) insert.run('y'.repeat(3000));
      })();
      raw.exec(`DROP TABLE scratch`);
      const before = (await value('database:info')).file;
      expect(before?.freePages).toBeGreaterThan(2000);

      const r = await value('database:vacuum');

      // every free page, and the pointer-map pages that tracked them (auto_vacuum keeps those)
      expect(r.pagesFreed).toBeGreaterThanOrEqual(before?.freePages ?? Infinity);
      expect(r.pagesFreed).toBeLessThan((before?.freePages ?? 0) * 1.01);
      expect(r.bytesBefore - r.bytesAfter).toBe(r.pagesFreed * 4096);
      expect((await value('database:info')).file?.freePages).toBe(0);
      expect(progress[0]).toMatchObject({
        operation: 'vacuum',
        done: 0,
        total: before?.freePages,
        unit: 'pages',
      });
      // a step of a thousand pages at a time: progress in between, never backwards, to the end
      expect(progress.length).toBeGreaterThanOrEqual(4);
      const dones = progress.map((p) => p.done);
      expect([...dones].sort((a, b) => a - b)).toEqual(dones);
      expect(dones[dones.length - 1]).toBe(before?.freePages);
    });

    it('refuses to convert a file without incremental auto_vacuum while it is open, saying how', async () => {
      const raw = (t.engine as SqliteEngine).db.raw;
      raw.pragma('auto_vacuum = NONE');
      raw.exec('VACUUM');
      expect((await value('database:info')).file?.autoVacuum).toBe('none');

      const r = await call('database:vacuum');

      expect(r).toMatchObject({ ok: false, error: { code: 'INVALID_STATE' } });
      expect(r.ok ? '' : r.error.message).toContain('npx runnel vacuum --db');
    });
  });
}

if (TEST_BACKEND === 'postgres') {
  describe('the file operations on PostgreSQL', () => {
    it('are refused, naming what to use instead', async () => {
      for (const [channel, input, tool] of [
        ['database:check', undefined, 'pg_amcheck'],
        ['database:backup', { dest: path.join(t.dir, 'copy.db') }, 'pg_dump'],
        ['database:vacuum', undefined, 'autovacuum'],
      ] as const) {
        const r = await call(channel, input as never);
        expect(r).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT' } });
        expect(r.ok ? '' : r.error.message).toContain(tool);
      }
    });
  });
}
