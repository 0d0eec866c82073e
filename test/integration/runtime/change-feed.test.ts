/**
 * The change feed on real databases (both backends: this file is in the integration-pg project):
 * `changes:read` answers every committed history event once, in strictly increasing cursor order,
 * paged and filtered by workflow; named consumers keep their cursor in the database
 * (`changes:ack`, monotonic), `changes:consumers` lists them with the feed's head, and the storage
 * port's `lowestConsumerCursor` is what retention reads.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHandlers, dispatch } from '../../../engine/api/handlers';
import type { ChangeEntry, Output, Channel, Input } from '../../../engine/api/contract';
import { checkDatabase } from '../../../engine/db/check';
import { runToSettled, TEST_BACKEND, tempEngine, type TempEngine } from '../../helpers/temp-engine';

let t: TempEngine;
let call: <C extends Channel>(channel: C, input: Input<C>) => Promise<{ ok: true; value: Output<C> } | { ok: false; error: { code: string; message: string; details?: unknown } }>;
/** The value of a call that must succeed. */
async function value<C extends Channel>(channel: C, input: Input<C>): Promise<Output<C>> {
  const r = await call(channel, input);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code}: ${r.error.message}`);
  return r.value;
}

const twoSteps = (name: string) => ({
  name,
  nodes: [
    { id: 'a', type: 'pass', config: {} },
    { id: 'b', type: 'pass', config: {} },
  ],
  edges: [{ from: 'a', to: 'b' }],
});

/** Every history id of instances `ids`, ascending (what the feed must answer, each once). */
async function historyIds(ids: number[]): Promise<number[]> {
  const all: number[] = [];
  for (const id of ids) all.push(...(await t.engine.history(id, 0, 10_000)).map((e) => e.id));
  return all.sort((x, y) => x - y);
}

/** Reads the whole feed after `after` in pages of `limit`, checking each page's cursor. */
async function readAll(input: { after?: number; limit: number; workflow?: string }): Promise<{ entries: ChangeEntry[]; cursor: number }> {
  const entries: ChangeEntry[] = [];
  let after = input.after ?? 0;
  for (;;) {
    const page = await value('changes:read', { ...input, after });
    expect(page.cursor).toBeGreaterThanOrEqual(after);
    entries.push(...page.entries);
    if (page.entries.length < input.limit) return { entries, cursor: page.cursor };
    expect(page.cursor).toBe(page.entries[page.entries.length - 1]?.cursor);
    after = page.cursor;
  }
}

beforeEach(() => {
  t = tempEngine();
  const handlers = createHandlers(t.engine);
  call = (channel, input) => dispatch(handlers, channel, input) as never;
});
afterEach(async () => t.close());

describe('change feed', () => {
  it('answers every committed history event once, in strictly increasing cursor order, with its workflow, paged and resumable', async () => {
    // given: two workflows, three instances run to the end
    await t.engine.deploy(twoSteps('orders'));
    await t.engine.deploy(twoSteps('refunds'));
    const ids = [await t.engine.start('orders', { variables: { n: 1 } }), await t.engine.start('refunds'), await t.engine.start('orders', { variables: { n: 2 } })];
    for (const id of ids) await runToSettled(t.engine, id);
    const want = await historyIds(ids);
    expect(want.length).toBeGreaterThanOrEqual(9);

    // when: read from the start in pages of 4
    const { entries, cursor } = await readAll({ limit: 4 });

    // then: each history id once, ascending, and the last cursor is the head
    expect(entries.map((e) => e.cursor)).toEqual(want);
    expect(cursor).toBe(want[want.length - 1]);
    const first = entries[0];
    expect(first).toMatchObject({ instanceId: ids[0], workflow: 'orders', workflowVersion: 1, type: 'instance.created', nodeId: null });
    const history = await t.engine.history(ids[1] as number, 0, 100);
    const fromFeed = entries.filter((e) => e.instanceId === ids[1]);
    expect(fromFeed.map((e) => ({ id: e.cursor, nodeId: e.nodeId, type: e.type, at: e.at, attempt: e.attempt, actor: e.actor, data: e.data }))).toEqual(
      history.map((h) => ({ id: h.id, nodeId: h.nodeId, type: h.type, at: h.at, attempt: h.attempt, actor: h.actor, data: h.data })),
    );
    expect(fromFeed.every((e) => e.workflow === 'refunds' && e.workflowVersion === 1)).toBe(true);

    // and: resuming after a cursor answers exactly the entries after it
    const mid = want[4] as number;
    expect((await readAll({ after: mid, limit: 1000 })).entries.map((e) => e.cursor)).toEqual(want.filter((id) => id > mid));
    // and: nothing after the head, and the cursor stays where it was
    expect(await value('changes:read', { after: cursor })).toEqual({ entries: [], cursor, head: cursor });

    // and: entries committed later come after, with higher cursors
    const late = await t.engine.start('refunds');
    await runToSettled(t.engine, late);
    const more = await value('changes:read', { after: cursor });
    expect(more.entries.map((e) => e.cursor)).toEqual(await historyIds([late]));
    expect(more.entries.every((e) => e.cursor > cursor)).toBe(true);
  });

  it('filters by workflow: only its entries, and the cursor moves past the others', async () => {
    await t.engine.deploy(twoSteps('orders'));
    await t.engine.deploy(twoSteps('refunds'));
    const order = await t.engine.start('orders');
    const refund = await t.engine.start('refunds');
    await runToSettled(t.engine, order);
    await runToSettled(t.engine, refund);
    const refundIds = await historyIds([refund]);
    const head = Math.max(...(await historyIds([order, refund])));

    const page = await value('changes:read', { workflow: 'refunds' });
    expect(page.entries.map((e) => e.cursor)).toEqual(refundIds);
    expect(page).toMatchObject({ cursor: head, head });
    // a full page of a filtered read resumes after its last entry
    const two = await value('changes:read', { workflow: 'refunds', limit: 2 });
    expect(two.entries.map((e) => e.cursor)).toEqual(refundIds.slice(0, 2));
    expect(two.cursor).toBe(refundIds[1]);
    expect(await value('changes:read', { workflow: 'nothing-by-this-name' })).toEqual({ entries: [], cursor: head, head });
  });

  it("filters by workflow: a schedule's entries (no instance) carry its workflow and pass its filter", async () => {
    // given: a workflow with a schedule none of whose due times has come, and another workflow
    await t.engine.deploy({ ...twoSteps('nightly'), schedules: [{ id: 'night', cron: '0 3 1 1 *' }] });
    await t.engine.deploy(twoSteps('orders'));
    // when: the schedule is paused and resumed (entries of no instance)
    await t.engine.pauseSchedule('nightly', 'night', { actor: 'ops' });
    await t.engine.resumeSchedule('nightly', 'night', { actor: 'ops' });
    // then: both entries name the workflow, and a read of that workflow answers them
    const page = await value('changes:read', { workflow: 'nightly' });
    expect(page.entries.map((e) => [e.type, e.instanceId, e.workflow, e.workflowVersion])).toEqual([
      ['schedule.paused', null, 'nightly', null],
      ['schedule.resumed', null, 'nightly', null],
    ]);
    // and a read of another workflow does not
    expect((await value('changes:read', { workflow: 'orders' })).entries).toEqual([]);
  });

  it('keeps named consumers: acknowledging registers and is monotonic, a read resumes after the cursor, and the lowest cursor is what retention reads', async () => {
    await t.engine.deploy(twoSteps('orders'));
    const id = await t.engine.start('orders');
    await runToSettled(t.engine, id);
    const ids = await historyIds([id]);
    const head = ids[ids.length - 1] as number;
    // given: no consumer
    expect(await t.engine.storage.write((q) => q.consumers.lowestConsumerCursor())).toBeUndefined();
    expect(await value('changes:consumers', {})).toEqual({ consumers: [], head });

    // when: two consumers acknowledge
    const exporter = await value('changes:ack', { consumer: 'exporter', cursor: ids[1] as number });
    expect(exporter).toMatchObject({ name: 'exporter', cursor: ids[1] });
    expect(exporter.createdAt).toBe(exporter.updatedAt);
    await value('changes:ack', { consumer: 'audit 🧾', cursor: head });

    // then: a read with the consumer resumes after its cursor; an explicit `after` wins
    expect((await value('changes:read', { consumer: 'exporter' })).entries.map((e) => e.cursor)).toEqual(ids.slice(2));
    expect((await value('changes:read', { consumer: 'exporter', after: head - 1 })).entries.map((e) => e.cursor)).toEqual([head]);
    // a consumer never registered reads from the start, and reading registers nothing
    expect((await value('changes:read', { consumer: 'newcomer' })).entries.map((e) => e.cursor)).toEqual(ids);
    expect((await value('changes:consumers', {})).consumers.map((c) => c.name)).toEqual(['audit 🧾', 'exporter']);
    expect(await t.engine.storage.write((q) => q.consumers.lowestConsumerCursor())).toBe(ids[1]);

    // when: an older ack arrives late (a restart repeating a line): the cursor stays
    expect(await value('changes:ack', { consumer: 'exporter', cursor: ids[0] as number })).toMatchObject({ cursor: ids[1] });
    // when: a cursor the feed never answered is acknowledged: refused, naming the field
    const past = await call('changes:ack', { consumer: 'exporter', cursor: head + 100 });
    expect(past).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT', details: { field: 'cursor', cursor: head + 100, head } } });
    if (!past.ok) expect(past.error.message).toContain('cursor: ');

    // when: it catches up, then the other is forgotten
    await value('changes:ack', { consumer: 'exporter', cursor: head });
    await value('changes:ack', { consumer: 'exporter', cursor: head - 2 });
    expect(await value('changes:consumers', {})).toMatchObject({ consumers: [{ name: 'audit 🧾', cursor: head }, { name: 'exporter', cursor: head }], head });
    expect(await value('changes:forget', { consumer: 'exporter' })).toEqual({ consumer: 'exporter' });
    expect(await call('changes:forget', { consumer: 'exporter' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect((await value('changes:consumers', {})).consumers.map((c) => c.name)).toEqual(['audit 🧾']);
    await value('changes:forget', { consumer: 'audit 🧾' });
    expect(await t.engine.storage.write((q) => q.consumers.lowestConsumerCursor())).toBeUndefined();
  });

  it('never hands out a cursor twice: after the newest instance is deleted, new entries get ids above every id given before, and a consumer sees each', async () => {
    // given: two ended instances, and a consumer that has read and acknowledged the whole feed
    await t.engine.deploy(twoSteps('orders'));
    const older = await t.engine.start('orders');
    await runToSettled(t.engine, older);
    const newest = await t.engine.start('orders');
    await runToSettled(t.engine, newest);
    const given = await historyIds([older, newest]);
    const highest = given[given.length - 1] as number;
    const read = await value('changes:read', { consumer: 'exporter' });
    expect(read.entries.map((e) => e.cursor)).toEqual(given);
    expect(read).toMatchObject({ cursor: highest, head: highest });
    await value('changes:ack', { consumer: 'exporter', cursor: read.cursor });

    // when: the newest instance is deleted, history rows and all (the feed's last ids with them)
    const deleted = await value('instance:delete', { id: newest });
    expect(deleted.deleted.history).toBeGreaterThanOrEqual(3);

    // then: the feed's head does not go back, and the consumer's cursor stays acknowledgeable
    const idle = await value('changes:read', { consumer: 'exporter' });
    expect(idle).toEqual({ entries: [], cursor: highest, head: highest });
    expect(await value('changes:consumers', {})).toMatchObject({ consumers: [{ name: 'exporter', cursor: highest }], head: highest });
    expect(await value('changes:ack', { consumer: 'exporter', cursor: highest })).toMatchObject({ cursor: highest });

    // when: new transitions happen
    const later = await t.engine.start('orders');
    await runToSettled(t.engine, later);
    const fresh = await historyIds([later]);
    expect(fresh.length).toBeGreaterThanOrEqual(3);

    // then: every new id is above every id handed out before, and the consumer reads each of them
    expect(fresh.every((id) => id > highest)).toBe(true);
    const next = await value('changes:read', { consumer: 'exporter' });
    expect(next.entries.map((e) => e.cursor)).toEqual(fresh);
    expect(next.entries.every((e) => e.instanceId === later)).toBe(true);
    expect(next.cursor).toBe(fresh[fresh.length - 1]);
    // and: `runnel check` finds the file sound (its history ids increase with time)
    if (TEST_BACKEND === 'sqlite') expect(checkDatabase(t.file).violations).toEqual([]);
  });
});
