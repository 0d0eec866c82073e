/**
 * The monitor's API and SQL against real engines on temp files, through the browser host:
 * - with 100,000 instances, the list's first page, a status filter and the other filters answer
 *   within a generous bound (the real figures are printed for the benchmark; never a tight timed
 *   assertion), with the right rows and counts;
 * - the "why is it stuck" columns of instances a real engine left retrying, waiting on a timer,
 *   waiting for an approval, SUSPENDED and FAILED;
 * - bulk cancel and retry touch exactly the filtered set (and not instances started after the
 *   preview), each recorded in history with the actor; more than the limit is refused, writing
 *   nothing;
 * - the Approvals inbox and the dashboard series.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Output } from '../../../engine/api/contract';
import { eventually, startSqliteTestHost, type SqliteTestHost } from '../../helpers/browser-host';
import { insertManyInstances, statusOf } from '../../helpers/many-instances';

const root = path.resolve(import.meta.dirname, '../../..');
const readJson = (file: string): Record<string, unknown> =>
  JSON.parse(fs.readFileSync(path.join(root, file), 'utf8')) as Record<string, unknown>;
type List = Output<'instance:list'>;
type Instance = Output<'instance:get'>;

/** Median wall time of `runs` calls (after one warm-up), ms. */
async function timeIt(run: () => Promise<unknown>, runs = 5): Promise<number> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}

describe('monitor list with 100,000 instances', () => {
  let h: SqliteTestHost;
  let inserted: Record<string, number>;
  const N = 100_000;
  const BOUND_MS = 2000;
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    // given 100,000 instances of the OTA workflow inserted in one transaction of raw INSERTs
    h = await startSqliteTestHost({ startWorker: false });
    const wf = readJson('examples/ota-upgrade.workflow.json');
    const saved = await h.value<Output<'workflow:save'>>('workflow:save', { definition: wf });
    await h.value('workflow:save', { definition: readJson('examples/purchase-approval.workflow.json') });
    const t0 = performance.now();
    inserted = insertManyInstances(h.engine.db.raw, {
      workflowId: saved.workflowId,
      nodeIds: (wf.nodes as { id: string }[]).map((n) => n.id),
      count: N,
    });
    timings.insert = performance.now() - t0;
  }, 120_000);

  afterAll(async () => {
    console.log(
      `[bench] monitor list, ${N.toLocaleString('en-US')} instances, median of 5 through the browser host (ms): ${JSON.stringify(Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, Math.round(v * 10) / 10])))}`,
    );
    await h?.close();
  });

  it('the first page (with per-status counts) answers within the bound, newest first, with the right counts', async () => {
    timings.firstPage50 = await timeIt(() => h.value('instance:list', { limit: 50 }));
    timings.firstPage200 = await timeIt(() => h.value('instance:list', { limit: 200 }));
    const page = await h.value<List>('instance:list', { limit: 200 });
    expect(page.items).toHaveLength(200);
    expect(page.items[0]?.id).toBe(N);
    expect(page.items.map((i) => i.id)).toEqual([...page.items.map((i) => i.id)].sort((a, b) => b - a));
    expect(page.counts).toEqual(inserted);
    expect(timings.firstPage50).toBeLessThan(BOUND_MS);
    expect(timings.firstPage200).toBeLessThan(BOUND_MS);
  });

  it('a status filter answers within the bound with only that status, and keyset pages on', async () => {
    timings.statusFailed = await timeIt(() => h.value('instance:list', { status: ['FAILED'], limit: 50 }));
    timings.statusSuspendedOrFailed = await timeIt(() =>
      h.value('instance:list', { status: ['SUSPENDED', 'FAILED'], limit: 50 }),
    );
    const failed = await h.value<List>('instance:list', { status: ['FAILED'], limit: 50 });
    expect(failed.items).toHaveLength(50);
    expect(failed.items.every((i) => i.status === 'FAILED')).toBe(true);
    // the "why" columns come with every row: the failed node, attempt 3 of 3, the error
    expect(failed.items[0]).toMatchObject({
      currentNodes: ['check'],
      attempt: 3,
      maxAttempts: 3,
      waitingFor: null,
    });
    expect(failed.items[0]?.reason).toMatch(/^HTTP_ERROR: device \d+ answered 503$/);
    const next = await h.value<List>('instance:list', {
      status: ['FAILED'],
      limit: 50,
      beforeId: failed.nextBeforeId ?? 0,
    });
    expect(Math.max(...next.items.map((i) => i.id))).toBeLessThan(Math.min(...failed.items.map((i) => i.id)));
    expect(timings.statusFailed).toBeLessThan(BOUND_MS);
    expect(timings.statusSuspendedOrFailed).toBeLessThan(BOUND_MS);
  });

  it('the other filters (workflow, time range, text, waiting for, node, a deep page) answer within the bound', async () => {
    const newest = await h.value<List>('instance:list', { limit: 1, withCounts: false });
    const at = newest.items[0]?.createdAt ?? 0;
    const cases: Record<string, Record<string, unknown>> = {
      workflow: { workflow: 'ota-upgrade', limit: 50 },
      emptyWorkflow: { workflow: 'purchase-approval', limit: 50 },
      lastHour: { createdFrom: at - 3_600_000, limit: 50 },
      oldWindow: { createdFrom: at - 90_000_000, createdTo: at - 80_000_000, limit: 50 },
      textError: { text: 'answered 503', limit: 50 },
      textKey: { text: 'key-99999', limit: 50 },
      waitingApproval: { waitingFor: 'approval', limit: 50 },
      waitingPerson: { waitingFor: 'person', limit: 50 },
      atNode: { node: 'check', status: ['WAITING'], limit: 50 },
      deepPage: { beforeId: 5000, limit: 50, withCounts: false },
    };
    for (const [name, input] of Object.entries(cases)) {
      timings[name] = await timeIt(() => h.value('instance:list', input));
      expect(timings[name], name).toBeLessThan(BOUND_MS);
    }
    const approvals = await h.value<List>('instance:list', cases.waitingApproval);
    expect(approvals.items.every((i) => i.status === 'WAITING' && i.waitingFor === 'approval')).toBe(true);
    expect(approvals.counts).toEqual({ WAITING: (inserted.WAITING ?? 0) / 2 });
    const byKey = await h.value<List>('instance:list', cases.textKey);
    expect(byKey.items.map((i) => i.businessKey)).toEqual(['key-99999']);
    const window = await h.value<List>('instance:list', { ...cases.oldWindow, limit: 1000 });
    expect(window.items.every((i) => i.createdAt >= at - 90_000_000 && i.createdAt <= at - 80_000_000)).toBe(
      true,
    );
    expect(Object.values(window.counts ?? {}).reduce((a, b) => a + b, 0)).toBe(10_001);
  });

  it('the inbox, the dashboard numbers and a bulk preview answer within the bound too', async () => {
    timings.approvals = await timeIt(() => h.value('instance:approvals', { limit: 100 }));
    timings.metrics = await timeIt(() => h.value('metrics:get'));
    timings.series1h = await timeIt(() => h.value('metrics:series', {}));
    timings.bulkPreview = await timeIt(() =>
      h.value('instance:bulk', { action: 'retry', filter: { status: ['FAILED'] } }),
    );
    for (const k of ['approvals', 'metrics', 'series1h', 'bulkPreview'])
      expect(timings[k], k).toBeLessThan(BOUND_MS);
    const inbox = await h.value<Output<'instance:approvals'>>('instance:approvals', { limit: 100 });
    expect(inbox.total).toBe((inserted.WAITING ?? 0) / 2);
    const m = await h.value<Output<'metrics:get'>>('metrics:get');
    // the oldest waiting instance is the first one inserted WAITING or SUSPENDED
    const firstWaiting =
      Array.from({ length: 40 }, (_, n) => n).find((n) => ['WAITING', 'SUSPENDED'].includes(statusOf(n))) ??
      -1;
    expect(m.oldestWaiting?.id).toBe(firstWaiting + 1);
  });

  it('a bulk action over more instances than the limit is refused and writes nothing', async () => {
    const live = (inserted.RUNNING ?? 0) + (inserted.WAITING ?? 0) + (inserted.SUSPENDED ?? 0);
    const preview = await h.value<Output<'instance:bulk'>>('instance:bulk', { action: 'cancel', filter: {} });
    expect(preview.matched).toBe(live);
    const r = await h.call('instance:bulk', {
      action: 'cancel',
      filter: {},
      dryRun: false,
      upToId: preview.upToId,
    });
    expect(r).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT' } });
    expect((await h.value<List>('instance:list', { limit: 1 })).counts).toEqual(inserted);
  });
});

describe('monitor list on a real engine: why is it stuck, bulk actions, inbox, series', () => {
  let h: SqliteTestHost;
  const ids: Record<string, number> = {};
  const start = async (workflow: string, variables?: Record<string, unknown>): Promise<number> =>
    (
      await h.value<Output<'instance:start'>>(
        'instance:start',
        variables === undefined ? { workflow } : { workflow, variables },
      )
    ).id;
  const waitFor = (id: number, statuses: string[]): Promise<Instance> =>
    eventually(
      async () => {
        const inst = await h.value<Instance>('instance:get', { id });
        return statuses.includes(inst.status) ? inst : undefined;
      },
      30_000,
      `instance ${id} to be ${statuses.join('|')}`,
    );

  beforeAll(async () => {
    h = await startSqliteTestHost();
    for (const f of ['monitor-retry', 'monitor-wait', 'monitor-resume', 'monitor-refund', 'api-fail']) {
      await h.value('workflow:save', { definition: readJson(`test/fixtures/${f}.workflow.json`) });
    }
    await h.value('workflow:save', { definition: readJson('examples/purchase-approval.workflow.json') });
    ids.retrying = await start('monitor-retry');
    ids.timer = await start('monitor-wait');
    ids.approval = await start('purchase-approval');
    ids.suspended = await start('monitor-resume');
    ids.compensation = await start('monitor-refund');
    ids.failed = await start('api-fail');
    await eventually(
      async () => {
        const r = await h.value<List>('instance:list', { ids: Object.values(ids) });
        const byId = new Map(r.items.map((i) => [i.id, i]));
        const settled =
          byId.get(ids.retrying ?? 0)?.waitingFor === 'retry' &&
          byId.get(ids.timer ?? 0)?.status === 'WAITING' &&
          byId.get(ids.approval ?? 0)?.status === 'WAITING' &&
          byId.get(ids.suspended ?? 0)?.status === 'SUSPENDED' &&
          byId.get(ids.compensation ?? 0)?.status === 'SUSPENDED' &&
          byId.get(ids.failed ?? 0)?.status === 'FAILED';
        return settled ? true : undefined;
      },
      30_000,
      'every instance to settle',
    );
  });
  afterAll(async () => {
    await h.close();
  });

  it('each row says what it waits for, since when, attempt n of m, the next retry and why it stopped', async () => {
    const r = await h.value<List>('instance:list', { limit: 100 });
    const row = (k: string) => r.items.find((i) => i.id === ids[k]);
    const retrying = row('retrying');
    expect(retrying).toMatchObject({
      status: 'WAITING',
      currentNodes: ['flaky'],
      attempt: 1,
      maxAttempts: 3,
      waitingFor: 'retry',
    });
    expect(retrying?.nextRetryAt).toBeGreaterThan(Date.now() + 500_000);
    expect(retrying?.waitingUntil).toBe(retrying?.nextRetryAt);
    const timer = row('timer');
    expect(timer).toMatchObject({
      status: 'WAITING',
      currentNodes: ['nap'],
      waitingFor: 'timer',
      nextRetryAt: null,
    });
    expect((timer?.waitingUntil ?? 0) - (timer?.waitingSince ?? 0)).toBeGreaterThanOrEqual(590_000);
    expect(row('approval')).toMatchObject({
      status: 'WAITING',
      currentNodes: ['approve'],
      waitingFor: 'approval',
      attempt: 1,
      maxAttempts: 1,
    });
    expect(row('suspended')).toMatchObject({
      status: 'SUSPENDED',
      currentNodes: ['check'],
      waitingFor: 'person',
    });
    expect(row('suspended')?.reason).toMatch(
      /^"check" failed after 1 attempt: SCRIPT_ERROR: .*stock check failed: ok is not true$/,
    );
    expect(row('compensation')).toMatchObject({
      status: 'SUSPENDED',
      currentNodes: ['charge'],
      waitingFor: 'person',
    });
    expect(row('compensation')?.reason).toMatch(
      /^compensation of "charge" failed after 1 attempt: .*refund refused: refundOk is not true$/,
    );
    expect(row('failed')).toMatchObject({
      status: 'FAILED',
      currentNodes: ['boom'],
      attempt: 1,
      maxAttempts: 1,
    });
    expect(row('failed')?.reason).toMatch(/boom$/);
    // and each is found by what it waits for
    for (const [kind, key] of [
      ['retry', 'retrying'],
      ['timer', 'timer'],
      ['approval', 'approval'],
    ] as const) {
      expect(
        (await h.value<List>('instance:list', { waitingFor: kind })).items.map((i) => i.id),
        kind,
      ).toEqual([ids[key]]);
    }
    expect((await h.value<List>('instance:list', { waitingFor: 'person' })).items.map((i) => i.id)).toEqual([
      ids.compensation,
      ids.suspended,
    ]);
    expect((await h.value<List>('instance:list', { text: 'refundOk' })).items.map((i) => i.id)).toEqual([
      ids.compensation,
    ]);
  });

  it('bulk cancel of a filtered set touches exactly that set, each with its actor in history', async () => {
    // given 4 more waiting on a timer, and a purchase approval also waiting
    const more = [
      await start('monitor-wait'),
      await start('monitor-wait'),
      await start('monitor-wait'),
      await start('monitor-wait'),
    ];
    for (const id of more) await waitFor(id, ['WAITING']);
    const expected = [ids.timer ?? 0, ...more].sort((a, b) => a - b);
    const before = new Map(
      (await h.value<List>('instance:list', { limit: 100 })).items.map((i) => [i.id, i.status]),
    );
    // when the preview counts the WAITING instances of monitor-wait
    const filter = { workflow: 'monitor-wait', status: ['WAITING'] };
    const preview = await h.value<Output<'instance:bulk'>>('instance:bulk', { action: 'cancel', filter });
    expect(preview.matched).toBe(5);
    expect(preview.sample).toEqual(expected);
    // and one more is started after the preview, then the bulk cancel runs on the preview's set
    const late = await start('monitor-wait');
    await waitFor(late, ['WAITING']);
    const done = await h.value<Output<'instance:bulk'>>('instance:bulk', {
      action: 'cancel',
      filter,
      dryRun: false,
      upToId: preview.upToId,
      actor: 'night-shift',
    });
    expect(done).toMatchObject({ matched: 5, affected: 5, skipped: 0 });
    // then exactly those five are CANCELLED, with the actor in history; nothing else changed
    const after = new Map(
      (await h.value<List>('instance:list', { limit: 100 })).items.map((i) => [i.id, i.status]),
    );
    for (const [id, status] of after) {
      if (expected.includes(id)) expect(status, `#${id}`).toBe('CANCELLED');
      else if (id === late) expect(status).toBe('WAITING');
      else expect(status, `#${id}`).toBe(before.get(id));
    }
    for (const id of expected) {
      const hist = await h.value<Output<'instance:history'>>('instance:history', { id });
      expect(hist.events.find((e) => e.type === 'instance.cancel_requested')).toMatchObject({
        actor: 'night-shift',
        data: { compensate: false },
      });
    }
    await h.value('instance:cancel', { id: late });
  });

  it('bulk retry retries the FAILED instances of the filter from their failed node', async () => {
    const preview = await h.value<Output<'instance:bulk'>>('instance:bulk', {
      action: 'retry',
      filter: { workflow: 'api-fail' },
    });
    expect(preview).toMatchObject({ matched: 1, sample: [ids.failed] });
    // a filter that matches no FAILED instance touches nothing
    expect(
      (
        await h.value<Output<'instance:bulk'>>('instance:bulk', {
          action: 'retry',
          filter: { workflow: 'monitor-wait' },
          dryRun: false,
        })
      ).affected,
    ).toBe(0);
    const done = await h.value<Output<'instance:bulk'>>('instance:bulk', {
      action: 'retry',
      filter: { workflow: 'api-fail' },
      dryRun: false,
      upToId: preview.upToId,
      actor: 'ops',
    });
    expect(done.affected).toBe(1);
    await eventually(async () => {
      const hist = await h.value<Output<'instance:history'>>('instance:history', { id: ids.failed ?? 0 });
      return hist.events.some((e) => e.type === 'instance.retried' && e.actor === 'ops') ? true : undefined;
    });
    // api-fail always fails: it fails again, after its second attempt
    const again = await eventually(async () => {
      const inst = await h.value<Instance>('instance:get', { id: ids.failed ?? 0 });
      return inst.status === 'FAILED' && (inst.nodes.find((n) => n.id === 'boom')?.attempt ?? 0) === 2
        ? inst
        : undefined;
    });
    expect(again.status).toBe('FAILED');
  });

  it('the inbox lists the waiting approval; the series counts what ended', async () => {
    const inbox = await h.value<Output<'instance:approvals'>>('instance:approvals');
    expect(inbox.items.map((i) => [i.instanceId, i.nodeId])).toEqual([[ids.approval, 'approve']]);
    const series = await h.value<Output<'metrics:series'>>('metrics:series', { bucketMs: 60_000 });
    const sum = (k: 'cancelled' | 'failed' | 'started') => series.points.reduce((a, p) => a + p[k], 0);
    expect(sum('cancelled')).toBe(6);
    expect(sum('failed')).toBe(1);
    expect(sum('started')).toBe(11);
  });
});
