/**
 * Schedules across real worker processes on one database (both backends), their clock set by the
 * test (RUNNEL_CLOCK_OFFSET_MS: every process runs the same test time, the wall clock's pace):
 * three workers fire each due time of a per-second schedule once; `overlap: skip` never has two
 * instances of a schedule live at once; a 3-hour stop (workers gone, restarted 3 hours later in
 * test time) catches up as each `catchUp` mode says; Europe/Berlin 02:30 fires once across the
 * spring-forward and fall-back hours.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../engine/runtime/engine';
import { OffsetClock } from '../../../engine/runtime/clock';
import type { WorkflowInput } from '../../../engine/dsl/schema';
import { killChildren, spawnWorker } from '../../helpers/processes';
import { rowsIn } from '../../helpers/db-rows';
import { tempLocation } from '../../helpers/temp-engine';
import { createTestRegistry } from '../../helpers/test-nodes';

afterEach(async () => {
  await killChildren();
});

const HOUR = 3_600_000;
const iso = (t: number) => new Date(t).toISOString();

interface Setup {
  file: string;
  callLog: string;
  engine: Engine;
  clock: OffsetClock;
  done: () => Promise<void>;
}

/** A database, and an engine on it whose clock reads `at` now (test time). */
function setup(at: number): Setup {
  const db = tempLocation('runnel-sched-');
  const callLog = path.join(db.dir, 'calls.log');
  const clock = new OffsetClock();
  clock.offsetMs = at - Date.now();
  const engine = Engine.open(db.location, { registry: createTestRegistry(callLog), clock });
  return {
    file: db.location,
    callLog,
    engine,
    clock,
    done: async () => {
      await engine.close();
      await db.cleanup();
    },
  };
}

/** Runs `n` worker processes whose clocks read `at` when they start, for `ms` of wall time, then stops them (SIGTERM). */
async function runWorkers(s: Setup, n: number, at: number, ms: number, during?: () => Promise<void>): Promise<void> {
  const offset = at - Date.now();
  const workers = Array.from({ length: n }, () =>
    spawnWorker({ db: s.file, callLog: s.callLog, exitWhenIdle: false, env: { RUNNEL_CLOCK_OFFSET_MS: String(offset) } }),
  );
  await Promise.all(workers.map((w) => w.ready));
  const until = Date.now() + ms;
  while (Date.now() < until) {
    await during?.();
    await new Promise((r) => setTimeout(r, 5));
  }
  for (const w of workers) w.kill('SIGTERM');
  const exits = await Promise.all(workers.map((w) => w.exited));
  expect(exits.map((e) => e.code), workers.map((w) => w.stderr()).join('\n')).toEqual(workers.map(() => 0));
}

async function businessKeys(file: string, workflow: string): Promise<string[]> {
  const rows = await rowsIn<{ business_key: string }>(
    file,
    'SELECT i.business_key FROM instance i JOIN workflow w ON w.id = i.workflow_id WHERE w.name = ? ORDER BY i.business_key',
    [workflow],
  );
  return rows.map((r) => r.business_key);
}

describe('schedules across worker processes', () => {
  it('three workers fire each due time of a per-second schedule exactly once', { timeout: 120_000 }, async () => {
    const start = Date.parse('2027-01-01T00:00:00Z');
    const s = setup(start);
    try {
      // given a schedule due every second and three workers on one database
      await s.engine.deploy({ name: 'tick', nodes: [{ id: 'c', type: 'count' }], schedules: [{ id: 'sec', cron: '* * * * * *', overlap: 'allow' }] } as WorkflowInput);
      // when they run for about 4 seconds
      await runWorkers(s, 3, start + 500, 4000);
      // then every second in between started one instance, none twice
      const keys = await businessKeys(s.file, 'tick');
      expect(keys.length).toBeGreaterThanOrEqual(3);
      expect(new Set(keys).size).toBe(keys.length);
      const times = keys.map((k) => Date.parse(k.replace('schedule:sec:', '')));
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(1000);
      const [row] = await s.engine.listSchedules('tick');
      expect(row?.lastDueAt).toBe(times[times.length - 1]);
    } finally {
      await s.done();
    }
  });

  it('overlap skip never has two instances of the schedule live at once', { timeout: 120_000 }, async () => {
    const start = Date.parse('2027-01-01T00:00:00Z');
    const s = setup(start);
    try {
      // given a per-second schedule whose instances take 1.5 s, overlap skip
      await s.engine.deploy({ name: 'long', nodes: [{ id: 'nap', type: 'slow', config: { ms: 1500 } }], schedules: [{ id: 'sec', cron: '* * * * * *', overlap: 'skip' }] } as WorkflowInput);
      let most = 0;
      const sample = async () => {
        const live = await rowsIn<{ n: number }>(s.file, "SELECT count(*) AS n FROM instance WHERE status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')");
        most = Math.max(most, Number(live[0]?.n ?? 0));
      };
      // when three workers run for about 6 seconds, sampled throughout
      await runWorkers(s, 3, start + 500, 6000, sample);
      // then never two live at once, the instances' lives do not overlap, and skipped times were recorded
      expect(most).toBe(1);
      const lives = await rowsIn<{ created_at: number; ended_at: number | null }>(s.file, 'SELECT created_at, ended_at FROM instance ORDER BY created_at');
      expect(lives.length).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < lives.length; i++) expect(Number(lives[i]!.created_at)).toBeGreaterThanOrEqual(Number(lives[i - 1]!.ended_at));
      const skips = (await s.engine.storage.read.changes({ after: 0, limit: 1000 })).entries.filter((e) => e.type === 'schedule.skipped');
      expect(skips.length).toBeGreaterThanOrEqual(1);
      expect(skips.map((e) => (e.data as { reason: string }).reason)).toEqual(skips.map(() => 'overlap'));
    } finally {
      await s.done();
    }
  });

  it('after a 3-hour stop, none starts nothing missed, latest the last hour, all every missed hour', { timeout: 120_000 }, async () => {
    const t0 = Date.parse('2027-01-01T00:30:00Z');
    const s = setup(t0);
    try {
      // given three hourly schedules, one per catch-up mode, and workers that ran at 00:30
      for (const mode of ['none', 'latest', 'all'] as const) {
        await s.engine.deploy({ name: `catch-${mode}`, nodes: [{ id: 'c', type: 'count' }], schedules: [{ id: 'h', cron: '0 * * * *', catchUp: mode, overlap: 'allow' }] } as WorkflowInput);
      }
      await runWorkers(s, 3, t0, 800);
      // when no worker runs for 3 hours, and three start again at 03:30
      await runWorkers(s, 3, t0 + 3 * HOUR, 2500);
      // then 01:00, 02:00 and 03:00 were missed: none starts none, latest 03:00, all each once
      const hour = (h: number) => `schedule:h:${iso(Date.parse('2027-01-01T00:00:00Z') + h * HOUR)}`;
      expect(await businessKeys(s.file, 'catch-none')).toEqual([]);
      expect(await businessKeys(s.file, 'catch-latest')).toEqual([hour(3)]);
      expect(await businessKeys(s.file, 'catch-all')).toEqual([hour(1), hour(2), hour(3)]);
      const next = (await s.engine.listSchedules()).map((r) => [r.workflow, r.nextDueAt]);
      expect(next).toEqual(['catch-all', 'catch-latest', 'catch-none'].map((w) => [w, Date.parse('2027-01-01T04:00:00Z')]));
    } finally {
      await s.done();
    }
  });

  it('Europe/Berlin 02:30 fires once across the spring-forward and the fall-back hour', { timeout: 120_000 }, async () => {
    const s = setup(Date.parse('2027-03-27T12:00:00Z'));
    try {
      // given a daily 02:30 schedule in Europe/Berlin
      await s.engine.deploy({ name: 'berlin', nodes: [{ id: 'c', type: 'count' }], schedules: [{ id: 'b', cron: '30 2 * * *', timezone: 'Europe/Berlin', overlap: 'allow' }] } as WorkflowInput);
      // when workers run across 01:00 UTC on 28 March (02:00 CET jumps to 03:00 CEST: 02:30 does not exist)
      await runWorkers(s, 3, Date.parse('2027-03-28T00:59:58Z'), 3500);
      // then it fired once, at 03:00 CEST
      expect(await businessKeys(s.file, 'berlin')).toEqual(['schedule:b:2027-03-28T01:00:00.000Z']);
      // and across both 02:30s of 31 October (00:30 UTC in CEST, 01:30 UTC in CET), only the first fires
      await s.engine.pauseSchedule('berlin', 'b');
      s.clock.offsetMs = Date.parse('2027-10-31T00:29:00Z') - Date.now();
      await s.engine.resumeSchedule('berlin', 'b');
      await runWorkers(s, 3, Date.parse('2027-10-31T00:29:58Z'), 3500);
      await runWorkers(s, 3, Date.parse('2027-10-31T01:29:58Z'), 3500);
      expect(await businessKeys(s.file, 'berlin')).toEqual(['schedule:b:2027-03-28T01:00:00.000Z', 'schedule:b:2027-10-31T00:30:00.000Z']);
    } finally {
      await s.done();
    }
  });
});
