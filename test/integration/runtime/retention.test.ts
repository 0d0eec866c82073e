/**
 * Retention on real databases (both backends): ended instances go with everything they own,
 * by the policies (a workflow's own over the engine's default) or by age; live ones never; a
 * child instance goes with its root and only once the whole tree has ended; `keepHistoryAfter`
 * holds back instances owning history a change-feed consumer has not read; one instance is
 * deleted by id, and a live one is refused. The clock is the test's own (ManualClock): ages are exact.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../engine/runtime/clock';
import { DAY_MS } from '../../../engine/runtime/retention';
import { rowsIn } from '../../helpers/db-rows';
import { runToSettled, tempEngine, type TempEngine } from '../../helpers/temp-engine';
import { EngineError } from '../../../engine/errors';
import { ackChanges, forgetConsumer } from '../../../engine/runtime/change-feed';

/** Rows of an instance in every table it owns. */
async function owned(file: string, id: number): Promise<Record<string, number>> {
  const n = async (sql: string) => Number((await rowsIn<{ n: number }>(file, sql, [id]))[0]?.n ?? 0);
  return {
    instance: await n('SELECT count(*) AS n FROM instance WHERE id = ?'),
    node_state: await n('SELECT count(*) AS n FROM node_state WHERE instance_id = ?'),
    history: await n('SELECT count(*) AS n FROM history WHERE instance_id = ?'),
    schedule: await n('SELECT count(*) AS n FROM schedule WHERE instance_id = ?'),
    dead_letter: await n('SELECT count(*) AS n FROM dead_letter WHERE instance_id = ?'),
    event: await n('SELECT count(*) AS n FROM event WHERE instance_id = ?'),
  };
}

const GONE = { instance: 0, node_state: 0, history: 0, schedule: 0, dead_letter: 0, event: 0 };

async function rejection(p: Promise<unknown>): Promise<EngineError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof EngineError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

/** Two COMPLETED instances of a one-node workflow, and the first one's last history id. */
async function twoCompleted({ engine, file }: TempEngine): Promise<{ first: number; last: number; second: number }> {
  await engine.deploy({ name: 'w', nodes: [{ id: 'p', type: 'pass', config: {} }] });
  const first = await engine.start('w');
  await runToSettled(engine, first);
  const last = Number((await rowsIn<{ m: number }>(file, 'SELECT max(id) AS m FROM history WHERE instance_id = ?', [first]))[0]?.m);
  const second = await engine.start('w');
  await runToSettled(engine, second);
  return { first, last, second };
}

describe('retention', () => {
  let t: TempEngine;
  afterEach(async () => t.close());

  /** One completed, one failed, one cancelled and one waiting instance of `name`, all ended (or parked) at the clock's now. */
  async function fourOf(name: string): Promise<{ completed: number; failed: number; cancelled: number; waiting: number }> {
    const { engine } = t;
    const completed = await engine.start(name, { variables: { mode: 'ok' } });
    const failed = await engine.start(name, { variables: { mode: 'fail' } });
    const cancelled = await engine.start(name, { variables: { mode: 'wait' } });
    const waiting = await engine.start(name, { variables: { mode: 'wait' } });
    await runToSettled(engine, completed);
    await runToSettled(engine, failed);
    await runToSettled(engine, waiting);
    await runToSettled(engine, cancelled);
    await engine.cancel(cancelled);
    return { completed, failed, cancelled, waiting };
  }

  const branching = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    ...extra,
    nodes: [
      { id: 'route', type: 'pass', config: {} },
      { id: 'done', type: 'pass', config: {} },
      { id: 'boom', type: 'script', config: { code: 'throw new Error("boom")' }, retry: { maxAttempts: 1 } },
      { id: 'ask', type: 'approval', config: {} },
    ],
    edges: [
      { from: 'route', to: 'done', when: "mode = 'ok'" },
      { from: 'route', to: 'boom', when: "mode = 'fail'" },
      { from: 'route', to: 'ask', when: "mode = 'wait'" },
    ],
  });

  it('by the default policy: COMPLETED and CANCELLED go 30 days after they ended, FAILED and live ones stay', async () => {
    const clock = new ManualClock(1_000_000_000_000);
    t = tempEngine({ clock });
    const { engine, file } = t;
    await engine.deploy(branching('orders'));
    const ids = await fourOf('orders');
    expect((await engine.getInstance(ids.failed)).status).toBe('FAILED');
    const before = await owned(file, ids.completed);
    expect(before.history).toBeGreaterThan(0);
    expect(before.node_state).toBe(4);

    clock.advance(30 * DAY_MS - 1000);
    const early = await engine.prune();
    expect(early.deleted.instances).toBe(0);

    clock.advance(2000);
    const report = await engine.prune();
    expect(report.byStatus).toEqual({ COMPLETED: 1, FAILED: 0, CANCELLED: 1 });
    expect(report.deleted.instances).toBe(2);
    expect(report.deleted.nodeStates).toBe(8);
    expect(await owned(file, ids.completed)).toEqual(GONE);
    expect(await owned(file, ids.cancelled)).toEqual(GONE);
    expect((await engine.getInstance(ids.failed)).status).toBe('FAILED');
    expect((await engine.getInstance(ids.waiting)).status).toBe('WAITING');
    // The waiting one still works.
    await engine.approve(ids.waiting, 'ask', { approved: true });
    expect((await runToSettled(engine, ids.waiting)).status).toBe('COMPLETED');
  });

  it("a workflow's own policy wins field by field; a dry run counts and deletes nothing", async () => {
    const clock = new ManualClock(1_000_000_000_000);
    t = tempEngine({ clock });
    const { engine } = t;
    await engine.deploy(branching('short', { retention: { completedDays: 1, failedDays: 2 } }));
    await engine.deploy(branching('forever', { retention: { completedDays: null, cancelledDays: null } }));
    const s = await fourOf('short');
    const f = await fourOf('forever');

    clock.advance(DAY_MS + 1);
    const dry = await engine.prune({ dryRun: true });
    expect(dry.dryRun).toBe(true);
    expect(dry.byStatus).toEqual({ COMPLETED: 1, FAILED: 0, CANCELLED: 0 });
    expect(dry.deleted.nodeStates).toBe(4);
    expect((await engine.getInstance(s.completed)).status).toBe('COMPLETED');

    expect((await engine.prune()).byStatus).toEqual({ COMPLETED: 1, FAILED: 0, CANCELLED: 0 });
    clock.advance(DAY_MS);
    expect((await engine.prune()).byStatus).toEqual({ COMPLETED: 0, FAILED: 1, CANCELLED: 0 });
    clock.advance(40 * DAY_MS);
    // `short` keeps the default for cancelled (30 days); `forever` keeps completed and cancelled, and failed by default.
    expect((await engine.prune()).byStatus).toEqual({ COMPLETED: 0, FAILED: 0, CANCELLED: 1 });
    for (const id of [f.completed, f.failed, f.cancelled, f.waiting, s.waiting]) expect((await engine.getInstance(id)).id).toBe(id);
    expect((await engine.listInstances({ workflow: 'short' })).map((i) => i.id)).toEqual([s.waiting]);
  });

  it('--older-than takes every ended status whatever the policies; --workflow narrows it', async () => {
    const clock = new ManualClock(1_000_000_000_000);
    t = tempEngine({ clock });
    const { engine } = t;
    await engine.deploy(branching('a', { retention: { completedDays: null } }));
    await engine.deploy(branching('b'));
    const a = await fourOf('a');
    const b = await fourOf('b');
    clock.advance(10_000);
    const r = await engine.prune({ olderThanMs: 5000, workflow: 'a' });
    expect(r.byStatus).toEqual({ COMPLETED: 1, FAILED: 1, CANCELLED: 1 });
    expect((await engine.listInstances({ workflow: 'a' })).map((i) => i.id)).toEqual([a.waiting]);
    expect((await engine.listInstances({ workflow: 'b' })).length).toBe(4);
    expect((await engine.prune({ olderThanMs: 20_000 })).deleted.instances).toBe(0);
    expect((await engine.prune({ olderThanMs: 0, batchSize: 1 })).byStatus).toEqual({ COMPLETED: 1, FAILED: 1, CANCELLED: 1 });
    expect((await engine.listInstances({})).map((i) => i.id).sort()).toEqual([a.waiting, b.waiting].sort());
  });

  it('a registered change-feed consumer holds back what it has not read, in prune and in delete', async () => {
    t = tempEngine();
    const { engine, file } = t;
    const { first, last, second } = await twoCompleted(t);
    // given: a consumer that has read through the first instance's history only
    await ackChanges(engine.storage, { consumer: 'warehouse', cursor: last, now: Date.now() });
    // when: everything ended is pruned
    const held = await engine.prune({ olderThanMs: 0 });
    // then: the first goes, the second stays, counted as held for its history
    expect(held).toMatchObject({ heldBack: 1, heldForHistory: 1, byStatus: { COMPLETED: 1, FAILED: 0, CANCELLED: 0 } });
    expect(await owned(file, first)).toEqual(GONE);
    await expect(engine.deleteInstance(second)).rejects.toMatchObject({ code: 'CONFLICT' });
    // a lower bound given by hand still wins over the consumer's
    expect((await engine.prune({ olderThanMs: 0, keepHistoryAfter: 0 })).heldForHistory).toBe(1);
    // once the consumer is forgotten, nothing holds it
    await forgetConsumer(engine.storage, 'warehouse');
    expect((await engine.prune({ olderThanMs: 0 })).byStatus.COMPLETED).toBe(1);
    expect(await owned(file, second)).toEqual(GONE);
  });

  it('keepHistoryAfter keeps instances owning history above it and counts them held back', async () => {
    t = tempEngine();
    const { engine, file } = t;
    const { first, last, second } = await twoCompleted(t);

    const held = await engine.prune({ olderThanMs: 0, keepHistoryAfter: last });
    expect(held.byStatus.COMPLETED).toBe(1);
    expect(held.heldBack).toBe(1);
    expect(held.heldForHistory).toBe(1);
    expect(await owned(file, first)).toEqual(GONE);
    expect((await engine.getInstance(second)).status).toBe('COMPLETED');

    expect((await engine.prune({ olderThanMs: 0, keepHistoryAfter: last - 1 })).heldForHistory).toBe(1);
    const all = await engine.prune({ olderThanMs: 0 });
    expect(all.byStatus.COMPLETED).toBe(1);
    expect(all.heldBack).toBe(0);
    expect(await owned(file, second)).toEqual(GONE);
  });

  it('deletes one ended instance by id with everything it owns; refuses a live one, a missing one and unread history', async () => {
    t = tempEngine();
    const { engine, file } = t;
    await engine.deploy(branching('one'));
    const done = await engine.start('one', { variables: { mode: 'ok' } });
    const live = await engine.start('one', { variables: { mode: 'wait' } });
    await runToSettled(engine, done);
    await runToSettled(engine, live);

    const refused = await rejection(engine.deleteInstance(live));
    expect(refused.code).toBe('INVALID_STATE');
    expect(refused.message).toBe(`instance ${live} is WAITING: only an ended instance (COMPLETED, FAILED or CANCELLED) can be deleted`);
    expect((await owned(file, live)).node_state).toBe(4);

    const lastHistory = Number((await rowsIn<{ m: number }>(file, 'SELECT max(id) AS m FROM history WHERE instance_id = ?', [done]))[0]?.m);
    expect((await rejection(engine.deleteInstance(done, { keepHistoryAfter: lastHistory - 1 }))).code).toBe('CONFLICT');

    const history = (await owned(file, done)).history;
    const counts = await engine.deleteInstance(done, { keepHistoryAfter: lastHistory });
    expect(counts).toEqual({ instances: 1, nodeStates: 4, schedule: 0, deadLetters: 0, history, events: 0, children: 0 });
    expect(await owned(file, done)).toEqual(GONE);
    expect((await rejection(engine.deleteInstance(done))).code).toBe('NOT_FOUND');
    expect((await engine.getInstance(live)).status).toBe('WAITING');
  });

  it('a child goes with its root, never on its own, and only once the whole tree has ended', async () => {
    t = tempEngine();
    const { engine, file } = t;
    await engine.deploy({ name: 'kid', nodes: [{ id: 'ask', type: 'approval', config: {} }] });
    await engine.deploy({ name: 'parent', nodes: [{ id: 'call', type: 'subworkflow', config: { workflow: 'kid' }, output: 'child' }] });
    const parent = await engine.start('parent');
    await runToSettled(engine, parent);
    const [child] = await engine.listInstances({ parentId: parent });
    expect(child?.status).toBe('WAITING');
    const childId = child!.id;

    expect((await rejection(engine.deleteInstance(childId))).message).toBe(
      `instance ${childId} is a child instance of instance ${parent}: it is deleted with its parent, not on its own`,
    );
    expect((await rejection(engine.deleteInstance(parent))).code).toBe('INVALID_STATE');
    expect((await engine.prune({ olderThanMs: 0 })).deleted.instances).toBe(0);

    await engine.approve(childId, 'ask', { approved: true });
    expect((await runToSettled(engine, parent)).status).toBe('COMPLETED');
    // A child that ended under an ended parent still does not go on its own.
    expect((await rejection(engine.deleteInstance(childId))).code).toBe('INVALID_STATE');

    const r = await engine.prune({ olderThanMs: 0 });
    expect(r.byStatus.COMPLETED).toBe(2);
    expect(r.deleted.children).toBe(1);
    expect(await owned(file, parent)).toEqual(GONE);
    expect(await owned(file, childId)).toEqual(GONE);
  });

  it('deleting an ended parent by id deletes its ended children with it', async () => {
    t = tempEngine();
    const { engine, file } = t;
    await engine.deploy({ name: 'kid', nodes: [{ id: 'ask', type: 'approval', config: {} }] });
    await engine.deploy({ name: 'parent', nodes: [{ id: 'call', type: 'map', config: { workflow: 'kid', items: '[1, 2]' } }] });
    const parent = await engine.start('parent');
    await runToSettled(engine, parent);
    const kids = (await engine.listInstances({ parentId: parent })).map((k) => k.id);
    expect(kids.length).toBe(2);
    await engine.cancel(parent);
    await runToSettled(engine, parent);
    // A cancel without compensation ends the children in the same transaction.
    expect(await Promise.all(kids.map(async (k) => (await engine.getInstance(k)).status))).toEqual(['CANCELLED', 'CANCELLED']);
    const counts = await engine.deleteInstance(parent);
    expect(counts.instances).toBe(3);
    for (const id of [parent, ...kids]) expect(await owned(file, id)).toEqual(GONE);
  });

  it('refuses bad input naming the field', async () => {
    t = tempEngine();
    expect((await rejection(t.engine.prune({ olderThanMs: -1 }))).message).toBe('olderThan must be a duration of 0 or more, got -1 ms');
    expect(() => tempEngineWith({ completedDays: -1 })).toThrow('retention.completedDays must be a number of days from 0 to 36500 (or null: kept for ever), got -1');
    expect(() => tempEngineWith({ failedDays: Number.POSITIVE_INFINITY })).toThrow('retention.failedDays must be a number of days');
  });
});

function tempEngineWith(retention: Record<string, number | null>): never {
  const e = tempEngine({ retention });
  void e.close();
  throw new Error('expected the engine to refuse the retention option');
}
