/**
 * `runnel show <id> --at <entry>` and `runnel fork <id> --at <entry>` on a real file: the
 * instance as it was right after a history entry (by id and by ISO time, the same shape as
 * `show` less `version`), and a copy started from there that runs only what was not done.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseJson, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

interface ShownJson {
  id: number;
  status: string;
  variables: Record<string, unknown>;
  nodes: Array<{ id: string; status: string; attempt: number; output?: unknown }>;
  at?: { id: number; type: string; nodeId: string | null; position: number; entries: number };
  history?: Array<{ id: number; type: string; nodeId: string | null; at: number }>;
}

const FLOW = {
  name: 'tt-cli',
  nodes: [
    { id: 'seed', type: 'pass', config: { result: { n: 20 } }, output: 'seed' },
    { id: 'double', type: 'script', config: { code: 'return input.seed.n * 2' }, output: 'answer' },
    { id: 'nap', type: 'delay', config: { durationMs: 20 } },
  ],
  edges: [
    { from: 'seed', to: 'double' },
    { from: 'double', to: 'nap' },
  ],
};

describe('runnel show --at and runnel fork', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  let file: string;
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
    file = path.join(tmp.dir, 'flow.workflow.json');
    fs.writeFileSync(file, JSON.stringify(FLOW));
  });
  afterEach(() => tmp.cleanup());

  it('shows the instance as it was after an entry (by id and by time), then forks a copy from there that runs only the rest', async () => {
    // Given a run to its end
    const run = await runCli('run', file, '--db', db, '--json');
    expect(run.code).toBe(0);
    const id = parseJson<ShownJson>(run).id;
    const full = parseJson<ShownJson>(await runCli('show', String(id), '--history', '--json', '--db', db));
    const seeded = full.history?.find((e) => e.type === 'node.completed' && e.nodeId === 'seed');
    expect(seeded).toBeDefined();
    const entry = seeded as { id: number; at: number };

    // When shown at the entry where `seed` completed
    const at = parseJson<ShownJson>(await runCli('show', String(id), '--at', String(entry.id), '--history', '--json', '--db', db));
    // Then it is the instance then: seed done, double not yet, no answer; the history stops there
    expect(at.status).toBe('RUNNING');
    expect(at.nodes.find((n) => n.id === 'seed')).toMatchObject({ status: 'COMPLETED', output: { n: 20 } });
    expect(at.nodes.find((n) => n.id === 'double')?.status).not.toBe('COMPLETED');
    expect(at.variables).toEqual({ seed: { n: 20 } });
    expect(at.at).toMatchObject({ id: entry.id, type: 'node.completed', nodeId: 'seed', entries: full.history?.length });
    expect(at.history?.at(-1)?.id).toBe(entry.id);
    // the same keys as `show` (plus `at` and the history asked for), less `version`: no version is
    // recorded per entry, and today's printed beside the past state would read as the one then
    const now = parseJson<ShownJson & { version: number }>(await runCli('show', String(id), '--json', '--db', db));
    expect(now.version).toBeGreaterThan(0);
    expect(at).not.toHaveProperty('version');
    expect(Object.keys(at).filter((k) => k !== 'at' && k !== 'history').sort()).toEqual(
      Object.keys(now).filter((k) => k !== 'children' && k !== 'version').sort(),
    );

    // by ISO time: the last entry at or before it
    const byTime = parseJson<ShownJson>(await runCli('show', String(id), '--at', new Date(entry.at).toISOString(), '--json', '--db', db));
    expect(byTime.at?.id).toBe(Math.max(...(full.history ?? []).filter((e) => e.at <= entry.at).map((e) => e.id)));

    // human output names the entry and gives no hints for the present
    const human = await runCli('show', String(id), '--at', String(entry.id), '--db', db);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^as of history entry ${entry.id} \\(\\d+ of \\d+\\): node.completed seed at `));
    expect(human.stdout).toContain(`instance ${id} (tt-cli v1) RUNNING`);

    // bad --at: named, exit 2
    const bad = await runCli('show', String(id), '--at', 'last tuesday', '--db', db);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: INVALID_INPUT: at: "last tuesday" is neither a history id/);
    // entry 0 the same way (it was BAD_REQUEST, the API's minimum, where -5 was INVALID_INPUT)
    for (const point of ['0', '-5', '']) {
      const none = await runCli('show', String(id), '--at', point, '--db', db);
      expect(none.code).toBe(2);
      expect(none.stderr).toBe(`error: INVALID_INPUT: at: "${point}" is neither a history id (a positive integer) nor an ISO 8601 time (e.g. 2026-12-02T16:00:00Z)\n`);
    }
    const outside = await runCli('show', String(id), '--at', '999999', '--db', db);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(/at: history entry 999999 is not one of instance \d+'s; its history runs from entry/);

    // When a copy is forked from that entry and worked to its end
    const forked = await runCli('fork', String(id), '--at', String(entry.id), '--actor', 'ops', '--wait', '--json', '--db', db);
    expect(forked.code).toBe(0);
    const copy = parseJson<ShownJson>(forked);
    // Then it completed, with seed's result kept (not run: no attempt) and the rest run
    expect(copy.id).not.toBe(id);
    expect(copy.status).toBe('COMPLETED');
    expect(copy.variables).toEqual({ seed: { n: 20 }, answer: 40 });
    expect(copy.nodes.find((n) => n.id === 'seed')).toMatchObject({ status: 'COMPLETED', attempt: 0, output: { n: 20 } });
    expect(copy.nodes.find((n) => n.id === 'double')).toMatchObject({ status: 'COMPLETED', attempt: 1 });
    const copyHistory = parseJson<ShownJson & { history: Array<{ type: string; actor: string | null; data?: unknown }> }>(
      await runCli('show', String(copy.id), '--history', '--json', '--db', db),
    ).history;
    expect(copyHistory[0]).toMatchObject({ type: 'instance.created', actor: 'ops', data: { forkedFrom: { id, at: entry.id } } });

    // fork without --at is refused by the command line
    const missing = await runCli('fork', String(id), '--db', db);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--at');
  });
});
