/**
 * The change feed read by a named consumer across SIGKILLs (both backends: this file is in the
 * integration-pg project). A real `runnel changes --follow --consumer exporter` child process is
 * killed with SIGKILL at the feed's fault points (engine/runtime/faults.ts) and restarted, while
 * this process commits more history. The delivery rule (engine/runtime/change-feed.ts): a line
 * is printed, then acknowledged; every line carries its cursor; a restart resumes after the
 * acknowledged cursor. So:
 * - killed after printing a line and before acknowledging it (`change-printed`), the restart
 *   prints that one line again, with the same cursor, and nothing else twice;
 * - killed after acknowledging (`change-acked`), the restart repeats nothing;
 * - in no case is a line skipped: a reader that keeps the last cursor it stored and drops lines
 *   at or below it holds every history id exactly once, in order, and the consumer's stored
 *   cursor ends at the feed's head.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChangeEntry } from '../../../engine/api/contract';
import { Engine } from '../../../engine/runtime/engine';
import { REPO_ROOT } from '../../helpers/cli';
import { killChildren, spawnScript, waitFor, type Child } from '../../helpers/processes';
import { runToSettled, tempLocation } from '../../helpers/temp-engine';

const BIN = `${REPO_ROOT}/bin/runnel.js`;

let where: Awaited<ReturnType<typeof tempLocation>>;
let engine: Engine;

beforeEach(async () => {
  where = tempLocation('runnel-feed-crash-');
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
  await engine.close();
  await where.cleanup();
});

/** Runs `n` instances to the end. */
async function runInstances(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await runToSettled(engine, await engine.start('exported', { variables: { i } }));
}

/** Every committed history id, ascending (the feed read whole in this process). */
async function allIds(): Promise<number[]> {
  const ids: number[] = [];
  for (let after = 0; ; ) {
    const page = await engine.storage.read.changes({ after, limit: 1000 });
    ids.push(...page.entries.map((e) => e.cursor));
    if (page.entries.length < 1000) return ids;
    after = page.cursor;
  }
}

/** The consumer's stored cursor (undefined before its first ack). */
async function stored(): Promise<number | undefined> {
  return (await engine.storage.read.changeConsumers()).find((c) => c.name === 'exporter')?.cursor;
}

/** `runnel changes --follow --consumer exporter`, with fault points armed when `faults` is given. */
function follow(faults?: string): Child {
  const env: Record<string, string> = faults === undefined ? {} : { RUNNEL_ENABLE_FAULTS: '1', RUNNEL_FAULTS: faults };
  return spawnScript(BIN, ['changes', '--follow', '--consumer', 'exporter', '--poll', '20', '--db', where.location], env);
}

/** The entries a child printed (every line is one JSON entry). */
function printed(c: Child): ChangeEntry[] {
  return c
    .stdout()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ChangeEntry);
}

describe('change feed consumer across SIGKILL', () => {
  it('skips nothing and repeats only the line printed but not acknowledged, which carries the same cursor', { timeout: 120_000 }, async () => {
    // given: committed history
    await runInstances(3);
    const before = await allIds();
    expect(before.length).toBeGreaterThanOrEqual(12);

    // when: the consumer is killed after printing its 5th line, before acknowledging it
    const first = follow('change-printed#5=kill');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const run1 = printed(first);
    // then: it printed 5 lines and acknowledged 4
    expect(run1.map((e) => e.cursor)).toEqual(before.slice(0, 5));
    expect(await stored()).toBe(before[3]);

    // when: restarted, it is killed again after acknowledging its 3rd line
    const second = follow('change-acked#3=kill');
    expect(await second.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const run2 = printed(second);
    // then: it began with the unacknowledged line again (same cursor), and acknowledged its 3rd
    expect(run2.map((e) => e.cursor)).toEqual(before.slice(4, 7));
    expect(await stored()).toBe(before[6]);

    // when: restarted for good, with more history committing while it follows
    const third = follow();
    await waitFor(async () => (await stored()) === before[before.length - 1], 30_000, 'the consumer catching up');
    await runInstances(2);
    const ids = await allIds();
    const head = ids[ids.length - 1] as number;
    await waitFor(async () => (await stored()) === head, 30_000, 'the consumer reaching the head');
    await waitFor(() => printed(third).some((e) => e.cursor === head), 30_000, 'the head printed');
    third.kill('SIGTERM');
    expect((await third.exited).code).toBe(130);
    const run3 = printed(third);

    // then: it repeated nothing that run 2 acknowledged
    expect(run3.map((e) => e.cursor)).toEqual(ids.slice(7));
    const lines = [...run1, ...run2, ...run3];
    // every line printed, once its cursor is kept, is the history: each id once, in order
    let last = 0;
    const kept: number[] = [];
    for (const e of lines) {
      if (e.cursor <= last) continue;
      kept.push(e.cursor);
      last = e.cursor;
    }
    expect(kept).toEqual(ids);
    // the only repeat is the line of the first kill, printed twice with the same content
    const repeats = lines.filter((e, i) => lines.findIndex((o) => o.cursor === e.cursor) !== i);
    expect(repeats).toEqual([run1[4]]);
    expect(run2[0]).toEqual(run1[4]);
    expect(await stored()).toBe(head);
  });
});
