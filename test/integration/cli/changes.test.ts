/**
 * `runnel changes` and `runnel consumers` on a real SQLite file, in process: JSON Lines of the
 * feed with `--since`, `--workflow`, `--limit` and `--consumer`; the consumers' table and
 * `--forget`; bad flags refused naming the flag, before the file is opened. (The follow mode
 * across SIGKILL is test/integration/runtime/change-feed-crash.test.ts.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChangeEntry } from '../../../engine/api/contract';
import { parseJson, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

let tmp: ReturnType<typeof tempDir>;
let db: string;

const flow = (name: string) => ({
  name,
  nodes: [
    { id: 'a', type: 'pass', config: {} },
    { id: 'b', type: 'pass', config: {} },
  ],
  edges: [{ from: 'a', to: 'b' }],
});

/** The entries of a `changes` call's stdout (one JSON object a line). */
function lines(stdout: string): ChangeEntry[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ChangeEntry);
}

beforeEach(async () => {
  tmp = tempDir('runnel-cli-changes-');
  db = path.join(tmp.dir, 'feed.db');
  for (const name of ['orders', 'refunds']) {
    const file = path.join(tmp.dir, `${name}.json`);
    fs.writeFileSync(file, JSON.stringify(flow(name)));
    expect((await runCli('run', file, '--db', db)).code).toBe(0);
  }
});
afterEach(() => tmp.cleanup());

describe('runnel changes', () => {
  it('prints the feed as JSON Lines, oldest first, each with its cursor; --since, --workflow and --limit narrow it', async () => {
    const all = await runCli('changes', '--db', db);
    expect(all.code).toBe(0);
    const entries = lines(all.stdout);
    const cursors = entries.map((e) => e.cursor);
    expect(cursors).toEqual(Array.from({ length: cursors.length }, (_, i) => i + 1));
    expect(entries[0]).toMatchObject({ cursor: 1, instanceId: 1, workflow: 'orders', workflowVersion: 1, type: 'instance.created' });
    // each line is the entry alone, the cursor its first field
    expect(all.stdout.split('\n')[0]).toMatch(/^\{"cursor":1,/);

    expect(lines((await runCli('changes', '--since', '3', '--db', db)).stdout).map((e) => e.cursor)).toEqual(cursors.slice(3));
    expect(lines((await runCli('changes', '--limit', '2', '--db', db)).stdout).map((e) => e.cursor)).toEqual([1, 2]);
    const refunds = lines((await runCli('changes', '--workflow', 'refunds', '--db', db)).stdout);
    expect(refunds.length).toBeGreaterThan(0);
    expect(refunds.every((e) => e.workflow === 'refunds' && e.instanceId === 2)).toBe(true);
    expect(refunds.map((e) => e.cursor)).toEqual(entries.filter((e) => e.instanceId === 2).map((e) => e.cursor));
  });

  it('keeps one entry a line whatever its text holds: the line and paragraph separators escaped, the value the same', async () => {
    const key = 'a\u2028b\u2029c\u202ed\u0085e';
    const file = path.join(tmp.dir, 'orders.json');
    expect((await runCli('run', file, '--db', db, '--business-key', key)).code).toBe(0);
    const out = (await runCli('changes', '--db', db)).stdout;
    // (split as Python's splitlines and JavaScript's line readers do)
    const physical = out.split(/\r\n|[\n\r\u0085\u2028\u2029]/).filter((l) => l !== '');
    const entries = lines(out);
    expect(physical).toHaveLength(entries.length);
    expect(out).not.toMatch(/[\u0085\u2028\u2029\u202e]/);
    expect(entries.find((e) => e.type === 'instance.created' && e.instanceId === 3)?.data).toMatchObject({ businessKey: key });
  });

  it('with --consumer resumes after what it acknowledged; consumers shows and forgets it', async () => {
    const total = lines((await runCli('changes', '--db', db)).stdout).length;
    expect(lines((await runCli('changes', '--consumer', 'export', '--limit', '3', '--db', db)).stdout).map((e) => e.cursor)).toEqual([1, 2, 3]);
    const listed = parseJson<{ head: number; consumers: { name: string; cursor: number; behind: number }[] }>(await runCli('consumers', '--json', '--db', db));
    expect(listed).toMatchObject({ head: total, consumers: [{ name: 'export', cursor: 3, behind: total - 3 }] });
    const table = await runCli('consumers', '--db', db);
    expect(table.stdout).toMatch(/^NAME\s+CURSOR\s+BEHIND\s+ACKNOWLEDGED\nexport\s+3\s+\d+\s+\d{4}-/);
    // the rest, then nothing more
    expect(lines((await runCli('changes', '--consumer', 'export', '--db', db)).stdout).map((e) => e.cursor)).toEqual(
      Array.from({ length: total - 3 }, (_, i) => i + 4),
    );
    expect((await runCli('changes', '--consumer', 'export', '--db', db)).stdout).toBe('');
    // --since wins over the stored cursor (the reader's own record), which an older cursor never moves back
    expect(lines((await runCli('changes', '--consumer', 'export', '--since', String(total - 1), '--db', db)).stdout).map((e) => e.cursor)).toEqual([total]);
    expect(parseJson<{ consumers: { cursor: number }[] }>(await runCli('consumers', '--json', '--db', db)).consumers[0]?.cursor).toBe(total);

    expect(await runCli('consumers', '--forget', 'export', '--db', db)).toMatchObject({ code: 0, stdout: 'consumer export forgotten\n' });
    const again = await runCli('consumers', '--forget', 'export', '--db', db);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('NOT_FOUND');
    expect((await runCli('consumers', '--db', db)).stdout).toBe(`no consumers (the feed's head is ${total})\n`);
  });

  it('refuses bad flags naming the flag, and a missing file without creating it', async () => {
    const since = await runCli('changes', '--since', 'yesterday', '--db', db);
    expect(since.code).toBe(2);
    expect(since.stderr).toContain('--since must be a cursor');
    const limit = await runCli('changes', '--limit', '0', '--db', db);
    expect(limit.code).toBe(2);
    expect(limit.stderr).toContain('--limit must be a positive integer');
    const missing = path.join(tmp.dir, 'none.db');
    const r = await runCli('changes', '--consumer', 'x', '--db', missing);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('NOT_FOUND');
    expect(fs.existsSync(missing)).toBe(false);
  });
});
