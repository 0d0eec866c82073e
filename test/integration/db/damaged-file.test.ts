/**
 * A damaged file (issue 17, item 5): damaged pages, a row edited by hand, a dropped table and a
 * rolled-back schema version all answer DATABASE_CORRUPT with how to recover — exit 2 from the
 * CLI, no stack trace — and once pages are found damaged no process writes to the file again
 * (a note beside it, `<file>-damaged`, says so to every process that opens it).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteEngine } from '../../../engine/runtime/engine';
import { runBin } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';
import { rejectionOf } from '../../helpers/engine-errors';

let dir: ReturnType<typeof tempDir> | undefined;
afterEach(() => {
  dir?.cleanup();
  dir = undefined;
});

const WORKFLOW = { name: 'plain', nodes: [{ id: 'a', type: 'pass' }, { id: 'b', type: 'pass' }], edges: [{ from: 'a', to: 'b' }] };

/** A file with `n` PENDING instances (and their variables), checkpointed and closed. */
async function fileWith(n: number): Promise<string> {
  dir = tempDir('runnel-damaged-');
  const file = path.join(dir.dir, 'runnel.db');
  const engine = SqliteEngine.open(file);
  await engine.deploy(WORKFLOW);
  for (let i = 0; i < n; i += 500) await engine.startMany('plain', Array.from({ length: Math.min(500, n - i) }, (_, j) => ({ n: i + j, pad: 'x'.repeat(200) })));
  engine.db.checkpoint('TRUNCATE');
  await engine.close();
  return file;
}


const sha = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/);

describe('damaged pages', () => {
  it('answer DATABASE_CORRUPT with how to recover, and nothing is written to the file after', { timeout: 60_000 }, async () => {
    // given: 8 leaf pages of the instance table overwritten with random bytes (the last one included)
    const file = await fileWith(2000);
    const pages = (() => {
      const db = new Database(file, { readonly: true });
      const rows = db.prepare(`SELECT pageno FROM dbstat WHERE name = 'instance' AND pagetype = 'leaf' ORDER BY pageno`).all() as { pageno: number }[];
      const size = db.pragma('page_size', { simple: true }) as number;
      db.close();
      return { numbers: [...rows.slice(-4), ...rows.slice(0, 4)].map((r) => r.pageno), size };
    })();
    expect(pages.numbers).toHaveLength(8);
    const fd = fs.openSync(file, 'r+');
    for (const p of pages.numbers) fs.writeSync(fd, crypto.randomBytes(pages.size), 0, pages.size, (p - 1) * pages.size);
    fs.closeSync(fd);
    const damagedBytes = sha(file);

    // when: a read meets the damage
    const list = await runBin(['list', '--db', file]);

    // then: exit 2, the typed error with the way out, no stack; the damage is noted beside the file
    expect(list.code).toBe(2);
    expect(list.stderr).toMatch(/DATABASE_CORRUPT/);
    expect(list.stderr).toMatch(/npx runnel check --db '[^']+'/);
    noStack(list.stderr);
    expect(fs.existsSync(`${file}-damaged`)).toBe(true);
    // a read command runs no worker, so closing its engine says nothing about one
    expect(list.stderr).not.toMatch(/runnel worker|loop turns|releas/);
    const again = await runBin(['list', '--db', file]);
    expect(again.code).toBe(2);
    expect(again.stderr).not.toMatch(/runnel worker|loop turns|releas/);

    // and: a later command that would write is refused at once, and the file is untouched
    const start = await runBin(['start', 'plain', '--db', file]);
    expect(start.code).toBe(2);
    expect(start.stderr).toMatch(/DATABASE_CORRUPT: .* was found damaged at .*; Runnel does not write to it/);
    noStack(start.stderr);
    expect(sha(file)).toBe(damagedBytes);

    // and: in-process, reads and writes say the same, and the worker writes nothing either
    const engine = SqliteEngine.open(file);
    try {
      expect((await rejectionOf(engine.start('plain'))).code).toBe('DATABASE_CORRUPT');
      expect((await rejectionOf(engine.listInstances())).code).toBe('DATABASE_CORRUPT');
      const logged: string[] = [];
      const original = console.error;
      console.error = (...a: unknown[]) => void logged.push(a.map(String).join(' '));
      try {
        engine.startWorker();
        await new Promise((r) => setTimeout(r, 600));
        await engine.stopWorker();
      } finally {
        console.error = original;
      }
      expect(logged.filter((l) => l.includes('DATABASE_CORRUPT'))).toHaveLength(1);
    } finally {
      await engine.close();
    }
    expect(sha(file)).toBe(damagedBytes);
  });
});

describe('rows and schema changed by hand', () => {
  it('a row whose JSON does not parse is named, and only its instance waits while the others run', { timeout: 30_000 }, async () => {
    const file = await fileWith(4);
    const db = new Database(file);
    db.prepare(`UPDATE instance SET variables_json = '{"n": 1, oops' WHERE id = 2`).run();
    db.close();

    const show = await runBin(['show', '2', '--db', file]);
    expect(show.code).toBe(2);
    expect(show.stderr).toMatch(/DATABASE_CORRUPT/);
    noStack(show.stderr);

    const engine = SqliteEngine.open(file);
    const logged: string[] = [];
    const original = console.error;
    console.error = (...a: unknown[]) => void logged.push(a.map(String).join(' '));
    try {
      await engine.runUntil(async () => (await engine.countByStatus()).COMPLETED === 3, 10_000);
    } finally {
      console.error = original;
    }
    expect(await engine.countByStatus()).toEqual({ COMPLETED: 3, PENDING: 1 });
    expect(logged.filter((l) => l.includes('instance 2 cannot be worked'))).toEqual([expect.stringMatching(/instance 2 variables_json holds text that is not JSON/)]);
    // a damaged row is not damaged pages: the file still takes writes
    expect(await engine.start('plain')).toBe(5);
    await engine.close();
    expect(fs.existsSync(`${file}-damaged`)).toBe(false);
  });

  it('a dropped table answers DATABASE_CORRUPT naming it', async () => {
    const file = await fileWith(1);
    const db = new Database(file);
    db.exec('DROP TABLE history');
    db.close();
    const show = await runBin(['show', '1', '--history', '--db', file]);
    expect(show.code).toBe(2);
    expect(show.stderr).toMatch(/DATABASE_CORRUPT: .*no such table: history/);
    noStack(show.stderr);
  });

  it('a schema version rolled back by hand is refused at open, nothing migrated', async () => {
    const file = await fileWith(1);
    const db = new Database(file);
    db.pragma('user_version = 2');
    db.close();
    const before = sha(file);
    const list = await runBin(['list', '--db', file]);
    expect(list.code).toBe(2);
    expect(list.stderr).toMatch(/DATABASE_CORRUPT: .*schema version \(2\) does not match its tables/);
    noStack(list.stderr);
    expect(sha(file)).toBe(before);
  });
});
