/**
 * `runnel show` says what the status alone does not: an instance paused by a person (since when,
 * and how to unpause it) and one held for its workflow's concurrency slot (found in a newcomer's
 * trial: both showed only WAITING / PENDING, the rest only in --json).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

describe('runnel show of a paused and a held instance', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
  });
  afterEach(() => tmp.cleanup());

  it('names the pause with how to undo it, and the concurrency hold', async () => {
    const wf = path.join(tmp.dir, 'one.json');
    fs.writeFileSync(wf, JSON.stringify({ name: 'one', concurrency: { limit: 1 }, nodes: [{ id: 'ask', type: 'approval', config: {} }] }));
    expect((await runCli('deploy', wf, '--db', db)).code).toBe(0);
    expect((await runCli('start', 'one', '--db', db)).code).toBe(0);
    expect((await runCli('start', 'one', '--db', db)).code).toBe(0);
    expect((await runCli('pause', '1', '--db', db)).code).toBe(0);

    const paused = await runCli('show', '1', '--db', db);
    expect(paused.code).toBe(0);
    expect(paused.stdout).toMatch(/^paused since \d{4}-\d\d-\d\dT[\d:.]+Z: it starts no node until unpaused$/m);
    expect(paused.stdout).toContain(`  unpause with: npx runnel unpause 1 --db ${db}`);
    expect(paused.stdout).not.toContain('held:');

    const held = await runCli('show', '2', '--db', db);
    expect(held.code).toBe(0);
    expect(held.stdout).toContain("held: it waits for a slot of its workflow's concurrency limit (it runs when an instance of its slot ends)");
    expect(held.stdout).not.toContain('paused since');
  });
});
