/**
 * examples/changes-to-postgres.ts as a real child process, tailing a Runnel database of the run's
 * backend (a SQLite file, or PostgreSQL in the integration-pg project) into a real PostgreSQL
 * database: SIGKILLed once mid-way at its fault point (a batch committed to the target, not yet
 * acknowledged to Runnel), restarted while more history commits, the target table holds every
 * feed entry exactly once, field for field, and the consumer's cursor ends at the feed's head.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChangeEntry } from '../../../engine/api/contract';
import { Engine } from '../../../engine/runtime/engine';
import { REPO_ROOT } from '../../helpers/cli';
import { killChildren, spawnScript, waitFor, type Child } from '../../helpers/processes';
import { tempPostgres } from '../../helpers/postgres';
import { runToSettled, tempLocation } from '../../helpers/temp-engine';

const EXAMPLE = `${REPO_ROOT}/examples/changes-to-postgres.ts`;

let where: ReturnType<typeof tempLocation>;
let target: Awaited<ReturnType<typeof tempPostgres>>;
let engine: Engine;
let client: pg.Client;

beforeEach(async () => {
  where = tempLocation('runnel-export-');
  target = await tempPostgres();
  client = new pg.Client({ connectionString: target.url });
  await client.connect();
  engine = Engine.open(where.location, { pollIntervalMs: 10 });
  await engine.deploy({
    name: 'exported',
    nodes: [
      { id: 'a', type: 'pass', config: {} },
      { id: 'b', type: 'pass', config: {} },
    ],
    edges: [{ from: 'a', to: 'b' }],
  });
});
afterEach(async () => {
  await killChildren();
  await client.end();
  await engine.close();
  await target.drop();
  await where.cleanup();
});

async function runInstances(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await runToSettled(engine, await engine.start('exported', { variables: { i } }));
}

/** The whole feed, read in this process. */
async function feed(): Promise<ChangeEntry[]> {
  return (await engine.storage.read.changes({ after: 0, limit: 10_000 })).entries;
}

/** The consumer's cursor as Runnel stores it. */
async function acked(): Promise<number | undefined> {
  return (await engine.storage.read.changeConsumers()).find((c) => c.name === 'analytics')?.cursor;
}

/** The cursors the target holds, ascending. */
async function exported(): Promise<number[]> {
  return (await client.query<{ cursor: string }>('SELECT cursor FROM runnel_change ORDER BY cursor')).rows.map((r) => Number(r.cursor));
}

function exporter(faults?: string): Child {
  const env: Record<string, string> = faults === undefined ? {} : { RUNNEL_ENABLE_FAULTS: '1', RUNNEL_FAULTS: faults };
  return spawnScript(EXAMPLE, ['--db', where.location, '--pg', target.url, '--consumer', 'analytics', '--batch', '4', '--poll', '20'], env);
}

describe('examples/changes-to-postgres.ts', () => {
  it('holds every entry exactly once in the target across a SIGKILL between a batch commit and its ack', { timeout: 120_000 }, async () => {
    // given: committed history
    await runInstances(4);
    const before = (await feed()).map((e) => e.cursor);
    expect(before.length).toBeGreaterThanOrEqual(16);

    // when: the exporter is killed after its 3rd batch committed to the target, before acknowledging it
    const first = exporter('change-exported#3=kill');
    expect(await first.exited, first.stderr()).toEqual({ code: null, signal: 'SIGKILL' });

    // then: the target holds the three batches; Runnel has the first two acknowledged
    expect(await exported()).toEqual(before.slice(0, 12));
    expect(await acked()).toBe(before[7]);
    expect(first.stdout().trim().split('\n').map((l) => JSON.parse(l) as unknown)).toEqual([
      { exported: 4, cursor: before[3] },
      { exported: 4, cursor: before[7] },
      { exported: 4, cursor: before[11] },
    ]);

    // when: restarted for good, while more history commits
    const second = exporter();
    await runInstances(2);
    const all = await feed();
    const head = all[all.length - 1]?.cursor as number;
    await waitFor(async () => (await acked()) === head, 30_000, 'the consumer acknowledging the head');
    second.kill('SIGTERM');
    expect(await second.exited, second.stderr()).toEqual({ code: 0, signal: null });

    // then: every entry once, in the target, as the feed answers it
    expect(await exported()).toEqual(all.map((e) => e.cursor));
    const rows = (await client.query('SELECT * FROM runnel_change ORDER BY cursor')).rows as Record<string, unknown>[];
    expect(
      rows.map((r) => ({
        cursor: Number(r.cursor),
        instanceId: r.instance_id === null ? null : Number(r.instance_id),
        workflow: r.workflow,
        workflowVersion: r.workflow_version,
        nodeId: r.node_id,
        type: r.type,
        at: Number(r.at),
        attempt: r.attempt,
        actor: r.actor,
        ...(r.data_json === null ? {} : { data: JSON.parse(r.data_json as string) as unknown }),
      })),
    ).toEqual(all);
    expect((await client.query('SELECT consumer, cursor FROM runnel_change_cursor')).rows).toEqual([{ consumer: 'analytics', cursor: String(head) }]);
    // the restart resumed from the target's cursor: its first batch began after the 3rd
    expect(JSON.parse(second.stdout().split('\n')[0] as string)).toMatchObject({ exported: 4, cursor: before[15] });
  });
});
