/**
 * `runnel prune` and `runnel delete` on a real file: a dry run says what it would delete and
 * deletes nothing; `--older-than` and `--workflow` select; `delete` removes one ended instance
 * and refuses a live one; bad flags are usage errors naming the flag.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../engine/runtime/engine';
import { parseJson, runCli } from '../../helpers/cli';
import { runToSettled, tempDir } from '../../helpers/temp-engine';

describe('runnel prune and runnel delete', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  const ids: { done: number[]; waiting: number } = { done: [], waiting: 0 };

  beforeEach(async () => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
    const engine = Engine.open(db, { retention: false });
    await engine.deploy({ name: 'quick', nodes: [{ id: 'p', type: 'pass', config: {} }] });
    await engine.deploy({ name: 'asks', nodes: [{ id: 'ask', type: 'approval', config: {} }] });
    ids.done = [];
    for (let i = 0; i < 3; i++) {
      const id = await engine.start('quick');
      await runToSettled(engine, id);
      ids.done.push(id);
    }
    ids.waiting = await engine.start('asks');
    await runToSettled(engine, ids.waiting);
    await engine.close();
  });
  afterEach(() => tmp.cleanup());

  it('--dry-run says what it would delete and deletes nothing; then prune deletes exactly that', async () => {
    const dry = await runCli('prune', '--older-than', '0d', '--dry-run', '--db', db);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(
      'would delete 3 instances (3 COMPLETED, 0 FAILED, 0 CANCELLED, child instances included) with 3 node states, 9 history rows, 0 schedule rows, 0 dead letters, 0 events\n',
    );
    expect(parseJson<unknown[]>(await runCli('list', '--db', db, '--json'))).toHaveLength(4);

    const done = parseJson<{ deleted: { instances: number; history: number }; byStatus: Record<string, number>; dryRun: boolean }>(
      await runCli('prune', '--older-than', '0d', '--db', db, '--json'),
    );
    expect(done).toMatchObject({ dryRun: false, byStatus: { COMPLETED: 3, FAILED: 0, CANCELLED: 0 }, deleted: { instances: 3, history: 9 } });
    expect(parseJson<{ id: number }[]>(await runCli('list', '--db', db, '--json')).map((i) => i.id)).toEqual([ids.waiting]);
  });

  it('without --older-than it follows the policies (30 days by default: nothing yet); --workflow narrows', async () => {
    expect((await runCli('prune', '--db', db)).stdout).toContain('deleted 0 instances');
    expect((await runCli('prune', '--retention-completed-days', '0', '--workflow', 'asks', '--db', db)).stdout).toContain('deleted 0 instances');
    expect((await runCli('prune', '--retention-completed-days', '0', '--workflow', 'quick', '--db', db)).stdout).toContain('deleted 3 instances');
  });

  it('an unknown --workflow is NOT_FOUND, exit 2, with or without --older-than and --dry-run', async () => {
    for (const extra of [[], ['--older-than', '0d'], ['--dry-run']]) {
      const r = await runCli('prune', '--workflow', 'nosuch', ...extra, '--db', db);
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 2, stdout: '', stderr: 'error: NOT_FOUND: workflow "nosuch" does not exist\n' });
    }
    expect(parseJson<unknown[]>(await runCli('list', '--db', db, '--json'))).toHaveLength(4);
  });

  it('prints a progress line only when something is deleted; the summary always', async () => {
    // Given nothing old enough (the default policies keep 30 days)
    // When pruned, a dry run too
    const none = await runCli('prune', '--db', db);
    const noneDry = await runCli('prune', '--dry-run', '--db', db);
    // Then the summary says so, and stderr carries no progress line
    expect(none).toMatchObject({ code: 0, stderr: '' });
    expect(none.stdout).toMatch(/^deleted 0 instances /);
    expect(noneDry).toMatchObject({ code: 0, stderr: '' });
    expect(noneDry.stdout).toMatch(/^would delete 0 instances /);

    // When three are old enough: the progress line counts them, then the summary
    const some = await runCli('prune', '--older-than', '0d', '--db', db);
    expect(some.code).toBe(0);
    expect(some.stderr).toBe('prune: deleted 3 instances so far\n');
    expect(some.stdout).toMatch(/^deleted 3 instances /);
  });

  it('delete removes one ended instance and refuses a live one', async () => {
    const [first] = ids.done;
    const r = await runCli('delete', String(first), '--db', db);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`instance ${first}: deleted with 1 node state, 3 history rows, 0 schedule rows, 0 dead letters, 0 events\n`);
    const live = await runCli('delete', String(ids.waiting), '--db', db);
    expect(live.code).toBe(2);
    expect(live.stderr).toContain(`error: INVALID_STATE: instance ${ids.waiting} is WAITING: only an ended instance (COMPLETED, FAILED or CANCELLED) can be deleted`);
    expect((await runCli('delete', String(first), '--db', db)).stderr).toContain('NOT_FOUND');
  });

  it('refuses bad flags naming them, before touching the file', async () => {
    const bad = await runCli('prune', '--older-than', '30 days', '--db', db);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--older-than must be a duration such as 30d, 12h, 90m or 2w (got "30 days")');
    const days = await runCli('prune', '--retention-failed-days', '-1', '--db', db);
    expect(days.code).toBe(2);
    expect(days.stderr).toContain('--retention-failed-days must be a number of days from 0 to 36500, or "never" (got "-1")');
  });
});
