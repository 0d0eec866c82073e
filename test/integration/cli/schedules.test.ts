/**
 * `runnel schedules` and `runnel schedule pause|resume|trigger` on a real SQLite file, in process:
 * the table and `--json` list with next due times; pause and resume; trigger starts an instance
 * under the overlap rule; unknown workflows and schedules are refused naming them; a deploy with
 * a bad cron expression names the schedule.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseJson, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

let tmp: ReturnType<typeof tempDir>;
let db: string;

function write(name: string, def: unknown): string {
  const file = path.join(tmp.dir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(def));
  return file;
}

beforeEach(async () => {
  tmp = tempDir('runnel-cli-schedules-');
  db = path.join(tmp.dir, 'sched.db');
  const file = write('report', {
    name: 'report',
    nodes: [{ id: 'ok', type: 'approval', config: { prompt: 'send?' } }],
    schedules: [
      { id: 'daily', cron: '0 6 * * *', timezone: 'Europe/Berlin' },
      { id: 'hourly', cron: '0 * * * *', overlap: 'allow', catchUp: 'latest' },
    ],
  });
  expect((await runCli('deploy', file, '--db', db)).code).toBe(0);
});
afterEach(() => tmp.cleanup());

describe('runnel schedules', () => {
  it('lists the live schedules with their next due times; --json gives the API shape', async () => {
    const r = await runCli('schedules', '--db', db);
    expect(r.code).toBe(0);
    const [head, daily, hourly] = r.stdout.trim().split('\n');
    expect(head).toMatch(/^WORKFLOW\s+SCHEDULE\s+CRON\s+STATE\s+NEXT DUE \(UTC\)\s+LAST FIRED \(UTC\)/);
    expect(daily).toMatch(/^report\s+daily\s+0 6 \* \* \* \(Europe\/Berlin\)\s+active\s+\d{4}-\d\d-\d\d (04|05):00:00\.000\s+-\s+-\s+skip\/none$/);
    expect(hourly).toMatch(/^report\s+hourly\s+0 \* \* \* \*\s+active\s+\d{4}-\d\d-\d\d \d\d:00:00\.000\s+-\s+-\s+allow\/latest$/);
    const list = parseJson<{ id: string; nextDueAt: number; upcoming: number[] }[]>(await runCli('schedules', '--workflow', 'report', '--json', '--db', db));
    expect(list.map((s) => s.id)).toEqual(['daily', 'hourly']);
    expect(list[1]!.upcoming).toHaveLength(5);
    expect(list[1]!.upcoming[1]! - list[1]!.upcoming[0]!).toBe(3_600_000);
    expect(list[1]!.nextDueAt).toBe(list[1]!.upcoming[0]);
  });

  it('pause, resume and trigger; trigger follows the overlap rule', async () => {
    const paused = await runCli('schedule', 'pause', 'report', 'daily', '--db', db);
    expect(paused).toMatchObject({ code: 0, stdout: 'schedule daily of report: paused\n' });
    expect((await runCli('schedules', '--db', db)).stdout).toMatch(/daily .*paused\s+-/);
    const resumed = await runCli('schedule', 'resume', 'report', 'daily', '--db', db);
    expect(resumed.stdout).toMatch(/^schedule daily of report: active, next due \d{4}-\d\d-\d\d \d\d:00:00\.000 UTC\n$/);
    const started = await runCli('schedule', 'trigger', 'report', 'daily', '--db', db);
    expect(started.stdout).toMatch(/^schedule daily of report: started instance 1 \(/);
    // overlap skip (the default): refused while instance 1 is live
    const again = await runCli('schedule', 'trigger', 'report', 'daily', '--db', db);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('has a live instance (1, ');
    // overlap allow: a second beside the first
    const json = parseJson<{ id: number }>(await runCli('schedule', 'trigger', 'report', 'hourly', '--json', '--db', db));
    expect(json.id).toBe(2);
    const list = parseJson<{ id: string; lastInstanceId: number | null }[]>(await runCli('schedules', '--json', '--db', db));
    expect(list.map((s) => [s.id, s.lastInstanceId])).toEqual([['daily', 1], ['hourly', 2]]);
  });

  it('names an unknown workflow or schedule, and a bad cron on deploy', async () => {
    const noWf = await runCli('schedule', 'pause', 'nope', 'daily', '--db', db);
    expect(noWf.code).not.toBe(0);
    expect(noWf.stderr).toContain('workflow "nope" does not exist');
    const noId = await runCli('schedule', 'trigger', 'report', 'weekly', '--db', db);
    expect(noId.stderr).toContain('workflow "report" has no schedule "weekly" (its schedules: "daily", "hourly")');
    const bad = write('bad', { name: 'bad', nodes: [{ id: 'a', type: 'pass' }], schedules: [{ id: 'x', cron: '0 6 * *' }] });
    const r = await runCli('deploy', bad, '--db', db);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('schedules[0].cron: a cron expression has 5 fields (minute hour day month weekday) or 6 (seconds first), not 4 (schedule "x")');
  });
});
