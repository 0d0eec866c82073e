// The monitor's zustand stores (list, detail, approvals, dashboard, notices, actor), built fresh
// per test over a fake API: what each sends, and how live updates are coalesced.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type {
  EventBatch,
  HistoryEvent,
  InstanceDetail,
  InstanceListItem,
  Result,
} from '../../../../engine/api/contract';
import type { ApiClient } from '../../../../renderer/src/api/client';
import { ACTOR_STORAGE_KEY, createActorStore } from '../../../../renderer/src/stores/actor-store';
import { createApprovalsStore } from '../../../../renderer/src/stores/approvals-store';
import { createDashboardStore } from '../../../../renderer/src/stores/dashboard-store';
import { createInstanceDetailStore } from '../../../../renderer/src/stores/instance-detail-store';
import { createInstanceListStore, filterRequest } from '../../../../renderer/src/stores/monitor-list-store';
import { connectMonitorStores, createMonitorStores } from '../../../../renderer/src/stores/monitor-stores';
import { createNoticesStore } from '../../../../renderer/src/stores/notices-store';
import { createUiStore } from '../../../../renderer/src/stores/ui-store';

type Handler = (input: Record<string, unknown>) => Result<unknown> | Promise<Result<unknown>>;

/** A fake client: answers per channel, records calls, lets a test push batches. */
function fakeApi(handlers: Partial<Record<string, Handler>>) {
  const calls: Array<[string, Record<string, unknown>]> = [];
  const listeners = new Set<(b: EventBatch) => void>();
  const api: ApiClient = {
    transport: 'http',
    invoke: (async (channel: string, input?: Record<string, unknown>) => {
      calls.push([channel, input ?? {}]);
      const h = handlers[channel];
      return h
        ? h(input ?? {})
        : { ok: false, error: { code: 'UNKNOWN_CHANNEL', message: `no fake for ${channel}` } };
    }) as ApiClient['invoke'],
    desktop: undefined,
    onEvent: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    onCommand: () => () => undefined,
    onResync: () => () => undefined,
    onConnection: () => () => undefined,
    close: () => undefined,
  };
  return {
    api,
    calls,
    called: (c: string) => calls.filter(([ch]) => ch === c).map(([, i]) => i),
    push: (b: EventBatch) => listeners.forEach((l) => l(b)),
  };
}

const ok = <T>(value: T): Result<T> => ({ ok: true, value });
const batch = (seq: number, events: EventBatch['events']): EventBatch => ({ seq, events, coalesced: 0 });
const item = (id: number, status: string, extra: Partial<InstanceListItem> = {}): InstanceListItem => ({
  id,
  workflow: 'w',
  workflowVersion: 1,
  status,
  businessKey: null,
  createdAt: 1000 + id,
  startedAt: 1000 + id,
  endedAt: null,
  version: 1,
  currentNodes: [],
  attempt: null,
  maxAttempts: null,
  nextRetryAt: null,
  waitingFor: null,
  waitingSince: null,
  waitingUntil: null,
  reason: null,
  ...extra,
});

describe('instance list store', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('loads the first page with counts under the filter, and pages on by keyset', async () => {
    // given a server with 3 rows per page
    const f = fakeApi({
      'instance:list': (input) =>
        input.beforeId === undefined
          ? ok({
              items: [item(9, 'RUNNING'), item(8, 'FAILED'), item(7, 'FAILED')],
              nextBeforeId: 7,
              counts: { RUNNING: 1, FAILED: 3 },
            })
          : ok({ items: [item(3, 'FAILED')], nextBeforeId: null }),
    });
    const s = createInstanceListStore(f.api, { pageSize: 3 });
    // when a filter is set and the next page is asked for
    s.getState().setFilter({ status: ['FAILED'], workflow: 'w', text: '  boom ', node: '' });
    await vi.waitFor(() => expect(s.getState().status).toBe('ready'));
    await s.getState().loadMore();
    // then the filter went out cleaned, the pages joined, and the cursor ended
    expect(f.called('instance:list')[0]).toEqual({
      status: ['FAILED'],
      workflow: 'w',
      text: 'boom',
      limit: 3,
      withCounts: true,
    });
    expect(f.called('instance:list')[1]).toMatchObject({
      beforeId: 7,
      withCounts: false,
      status: ['FAILED'],
    });
    expect(s.getState().items.map((i) => i.id)).toEqual([9, 8, 7, 3]);
    expect(s.getState().nextBeforeId).toBeNull();
    expect(s.getState().counts).toEqual({ RUNNING: 1, FAILED: 3 });
    expect(s.getState().lastLoadMs).not.toBeNull();
  });

  it('sorted by id ascending, pages oldest first with afterId and adds new rows at the end only once the end is loaded', async () => {
    // given a server of rows 1..5, two per page, oldest first with afterId
    let rows = [1, 2, 3, 4, 5];
    const f = fakeApi({
      'instance:list': (input) => {
        if (input.ids) return ok({ items: [], nextBeforeId: null });
        const limit = input.limit as number;
        const after = input.afterId as number | undefined;
        const page = after === undefined ? [...rows].reverse().slice(0, limit) : rows.filter((id) => id > after).slice(0, limit);
        return ok({
          items: page.map((id) => item(id, 'RUNNING')),
          nextBeforeId: page.length === limit ? (page[page.length - 1] ?? null) : null,
          counts: { RUNNING: rows.length },
        });
      },
    });
    const s = createInstanceListStore(f.api, { pageSize: 2, liveIntervalMs: 10 });
    await s.getState().load();
    expect(s.getState().items.map((i) => i.id)).toEqual([5, 4]);
    // when the sort turns to id ascending
    s.getState().setSort({ column: 'id', direction: 'ascending' });
    await vi.waitFor(() => expect(s.getState().items.map((i) => i.id)).toEqual([1, 2]));
    expect(f.called('instance:list').at(-1)).toMatchObject({ afterId: 0, limit: 2 });
    // a new row while the end is not loaded stays out (paging brings it in its place)
    rows = [1, 2, 3, 4, 5, 6];
    s.getState().applyBatch(batch(1, [{ type: 'instance.created', instanceId: 6, workflow: 'w', at: 1 } as never]));
    await s.getState().flushLive();
    expect(s.getState().items.map((i) => i.id)).toEqual([1, 2]);
    // then pages follow on, oldest first, to the end
    await s.getState().loadMore();
    await s.getState().loadMore();
    await s.getState().loadMore();
    expect(f.called('instance:list').filter((i) => i.withCounts === false).map((i) => i.afterId)).toEqual([2, 4, 6]);
    expect(s.getState().items.map((i) => i.id)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(s.getState().nextBeforeId).toBeNull();
    // and with the end loaded a new row lands at the end
    rows = [1, 2, 3, 4, 5, 6, 7];
    s.getState().applyBatch(batch(2, [{ type: 'instance.created', instanceId: 7, workflow: 'w', at: 1 } as never]));
    await s.getState().flushLive();
    expect(s.getState().items.map((i) => i.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // back to newest first reloads; a sort by another column then does not (the table sorts the
    // loaded rows)
    s.getState().setSort({ column: 'id', direction: 'descending' });
    await vi.waitFor(() => expect(s.getState().items.map((i) => i.id)).toEqual([7, 6]));
    const calls = f.called('instance:list').length;
    s.getState().setSort({ column: 'status', direction: 'ascending' });
    expect(f.called('instance:list').length).toBe(calls);
  });

  it('folds the start panel by default once instances exist, unfolds it on an empty file, and keeps the choice', async () => {
    const empty = createInstanceListStore(fakeApi({ 'instance:list': () => ok({ items: [], nextBeforeId: null, counts: {} }) }).api);
    await empty.getState().load();
    expect(empty.getState().startOpen).toBe(true);
    const some = createInstanceListStore(fakeApi({ 'instance:list': () => ok({ items: [item(1, 'RUNNING')], nextBeforeId: null, counts: { RUNNING: 1 } }) }).api);
    expect(some.getState().startOpen).toBeUndefined();
    await some.getState().load();
    expect(some.getState().startOpen).toBe(false);
    some.getState().setStartOpen(true);
    await some.getState().load();
    expect(some.getState().startOpen).toBe(true);
  });

  it('coalesces a burst of events into one flush: changed rows by id, new rows after the newest, one state change', async () => {
    // given a loaded list of rows 5..1
    const f = fakeApi({
      'instance:list': (input) => {
        if (input.ids)
          return ok({
            items: (input.ids as number[]).map((id) => item(id, 'COMPLETED', { endedAt: 5000 })),
            nextBeforeId: null,
          });
        if (input.afterId !== undefined)
          return ok({
            items: [item(6, 'PENDING'), item(7, 'RUNNING')],
            nextBeforeId: null,
            counts: { COMPLETED: 2, RUNNING: 4, PENDING: 1 },
          });
        return ok({
          items: [5, 4, 3, 2, 1].map((id) => item(id, 'RUNNING')),
          nextBeforeId: null,
          counts: { RUNNING: 5 },
        });
      },
    });
    const s = createInstanceListStore(f.api, { liveIntervalMs: 400 });
    await s.getState().load();
    const renders = vi.fn();
    s.subscribe(renders);
    // when 200 batches (1,000 events) arrive within one interval
    for (let b = 0; b < 200; b++) {
      s.getState().applyBatch(
        batch(b + 1, [
          { type: 'node.changed', instanceId: 5, nodeId: 'a', status: 'RUNNING' },
          { type: 'instance.changed', instanceId: 4, status: 'RUNNING' },
          { type: 'instance.finished', instanceId: 3, status: 'COMPLETED' },
          { type: 'instance.created', instanceId: 6 + (b % 2), workflow: 'w', version: 1 },
          { type: 'node.changed', instanceId: 999, nodeId: 'x', status: 'RUNNING' },
        ]),
      );
    }
    expect(f.called('instance:list')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(450);
    // then one flush made two calls and one state change
    const live = f.called('instance:list').slice(1);
    expect(live).toHaveLength(2);
    expect(live.find((i) => i.ids)).toMatchObject({ ids: [5, 4, 3], withCounts: false });
    expect(live.find((i) => i.afterId !== undefined)).toMatchObject({ afterId: 5, withCounts: true });
    expect(renders).toHaveBeenCalledTimes(1);
    expect(s.getState().liveFlushes).toBe(1);
    expect(s.getState().items.map((i) => [i.id, i.status])).toEqual([
      [7, 'RUNNING'],
      [6, 'PENDING'],
      [5, 'COMPLETED'],
      [4, 'COMPLETED'],
      [3, 'COMPLETED'],
      [2, 'RUNNING'],
      [1, 'RUNNING'],
    ]);
    expect(s.getState().counts).toEqual({ COMPLETED: 2, RUNNING: 4, PENDING: 1 });
    // and a steady stream gives at most one flush per interval
    for (let t = 0; t < 10; t++) {
      s.getState().applyBatch(
        batch(300 + t, [{ type: 'instance.changed', instanceId: 2, status: 'WAITING' }]),
      );
      await vi.advanceTimersByTimeAsync(100);
    }
    await vi.advanceTimersByTimeAsync(500);
    expect(s.getState().liveFlushes).toBeLessThanOrEqual(1 + Math.ceil(1500 / 400));
  });

  it('given more new rows than a page, reloads from the top instead of patching', async () => {
    let loads = 0;
    const f = fakeApi({
      'instance:list': (input) => {
        if (input.afterId !== undefined)
          return ok({ items: [10, 11, 12].map((id) => item(id, 'PENDING')), nextBeforeId: null, counts: {} });
        loads++;
        return ok({ items: [item(1, 'RUNNING')], nextBeforeId: null, counts: {} });
      },
    });
    const s = createInstanceListStore(f.api, { pageSize: 3, liveIntervalMs: 50 });
    await s.getState().load();
    s.getState().applyBatch(
      batch(1, [{ type: 'instance.created', instanceId: 12, workflow: 'w', version: 1 }]),
    );
    await vi.advanceTimersByTimeAsync(100);
    expect(loads).toBe(2);
  });

  it('starts with the actor and the chosen version; a refusal comes back as data', async () => {
    const f = fakeApi({
      'instance:list': () => ok({ items: [], nextBeforeId: null, counts: {} }),
      'instance:start': (input) =>
        input.variables
          ? { ok: false, error: { code: 'INVALID_VARIABLES', message: 'deviceId is required' } }
          : ok({ id: 4, status: 'PENDING', version: 1 }),
    });
    const s = createInstanceListStore(f.api, { actor: () => 'ada' });
    expect(await s.getState().start({ workflow: 'ota', version: 2, businessKey: 'k-1' })).toEqual(
      ok({ id: 4, status: 'PENDING', version: 1 }),
    );
    expect(f.called('instance:start')[0]).toEqual({
      workflow: 'ota',
      version: 2,
      businessKey: 'k-1',
      actor: 'ada',
    });
    expect(await s.getState().start({ workflow: 'ota', variables: {} })).toMatchObject({
      ok: false,
      error: { code: 'INVALID_VARIABLES' },
    });
  });

  it('sends bulk actions over the current filter, the preview first, then the run with its upToId', async () => {
    const f = fakeApi({
      'instance:list': () => ok({ items: [], nextBeforeId: null, counts: {} }),
      'instance:bulk': (input) =>
        ok({
          action: input.action,
          dryRun: input.dryRun,
          matched: 2,
          upToId: 40,
          sample: [3, 4],
          affected: input.dryRun ? 0 : 2,
          skipped: 0,
          errors: [],
        }),
    });
    const s = createInstanceListStore(f.api, { actor: () => 'ops' });
    s.getState().setFilter({ status: ['SUSPENDED'], workflow: 'ota' });
    const preview = await s.getState().bulk('cancel', { dryRun: true });
    await s.getState().bulk('cancel', { dryRun: false, upToId: preview?.upToId, compensate: true });
    expect(f.called('instance:bulk')).toEqual([
      {
        action: 'cancel',
        filter: { status: ['SUSPENDED'], workflow: 'ota' },
        dryRun: true,
        compensate: false,
        actor: 'ops',
      },
      {
        action: 'cancel',
        filter: { status: ['SUSPENDED'], workflow: 'ota' },
        dryRun: false,
        upToId: 40,
        compensate: true,
        actor: 'ops',
      },
    ]);
  });

  it('filterRequest leaves empty fields out', () => {
    expect(filterRequest({ status: [] })).toEqual({});
    expect(
      filterRequest({ status: ['FAILED'], text: ' ', version: 2, waitingFor: 'retry', createdFrom: 5 }),
    ).toEqual({ status: ['FAILED'], version: 2, waitingFor: 'retry', createdFrom: 5 });
  });
});

const detail = (version: number, status = 'SUSPENDED'): InstanceDetail => ({
  id: 7,
  workflow: 'w',
  workflowVersion: 2,
  status,
  businessKey: null,
  createdAt: 1,
  startedAt: 1,
  endedAt: null,
  version,
  workflowId: 3,
  variables: { ok: false },
  input: {},
  updatedAt: 2,
  deadlineAt: null,
  nodes: [],
});
const ev = (id: number, type: string): HistoryEvent => ({
  id,
  nodeId: null,
  type,
  at: id,
  attempt: null,
  actor: null,
});

describe('instance detail store', () => {
  it('opens an instance with its whole history (paged) and the definition of its own version', async () => {
    const f = fakeApi({
      'instance:get': () => ok(detail(4)),
      'instance:history': (input) =>
        input.afterId === 0
          ? ok({ events: [ev(1, 'instance.created'), ev(2, 'node.failed')], nextAfterId: 2 })
          : ok({ events: [ev(3, 'instance.suspended')], nextAfterId: null }),
      'workflow:get': () =>
        ok({ id: 3, name: 'w', version: 2, createdAt: 0, definition: { name: 'w', nodes: [], edges: [] } }),
    });
    const s = createInstanceDetailStore(f.api);
    await s.getState().open(7);
    expect(s.getState().status).toBe('ready');
    expect(s.getState().history.map((e) => e.id)).toEqual([1, 2, 3]);
    expect(f.called('workflow:get')).toEqual([{ name: 'w', version: 2 }]);
  });

  it('sends a resume with the edit, the actor and the version seen, then refreshes; a refusal is kept for the view', async () => {
    let version = 4;
    const f = fakeApi({
      'instance:get': () => ok(detail(version)),
      'instance:history': () => ok({ events: [], nextAfterId: null }),
      'workflow:get': () =>
        ok({ id: 3, name: 'w', version: 2, createdAt: 0, definition: { name: 'w', nodes: [], edges: [] } }),
      'instance:resume': (input) => {
        if (input.expectedVersion !== version)
          return { ok: false, error: { code: 'CONFLICT', message: 'changed' } };
        version++;
        return ok({ id: 7, status: 'RUNNING', version });
      },
    });
    const s = createInstanceDetailStore(f.api, { actor: () => 'ops' });
    await s.getState().open(7);
    expect(await s.getState().resume({ action: 'retry', variables: { ok: true } })).toBe(true);
    expect(f.called('instance:resume')[0]).toEqual({
      id: 7,
      action: 'retry',
      variables: { ok: true },
      expectedVersion: 4,
      actor: 'ops',
    });
    expect(s.getState().detail?.version).toBe(5);
    // a stale view is refused by the version check
    version = 9;
    expect(await s.getState().resume({ action: 'skip', result: { approved: true } })).toBe(false);
    expect(s.getState().actionError?.code).toBe('CONFLICT');
  });

  it('refreshes on events about its own instance only, at most once per interval', async () => {
    vi.useFakeTimers();
    try {
      const f = fakeApi({
        'instance:get': () => ok(detail(4, 'RUNNING')),
        'instance:history': () => ok({ events: [], nextAfterId: null }),
        'workflow:get': () =>
          ok({ id: 3, name: 'w', version: 2, createdAt: 0, definition: { name: 'w', nodes: [], edges: [] } }),
      });
      const s = createInstanceDetailStore(f.api, { refreshIntervalMs: 250 });
      await s.getState().open(7);
      const gets = () => f.called('instance:get').length;
      s.getState().applyBatch(batch(1, [{ type: 'instance.changed', instanceId: 8, status: 'RUNNING' }]));
      await vi.advanceTimersByTimeAsync(300);
      expect(gets()).toBe(1);
      for (let i = 0; i < 20; i++)
        s.getState().applyBatch(
          batch(2 + i, [{ type: 'node.changed', instanceId: 7, nodeId: 'a', status: 'RUNNING' }]),
        );
      await vi.advanceTimersByTimeAsync(300);
      expect(gets()).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('approvals store', () => {
  it('lists, decides as the actor (the item leaves at once), and reloads when an approval is requested', async () => {
    vi.useFakeTimers();
    try {
      const items = [
        {
          instanceId: 1,
          workflow: 'p',
          workflowVersion: 1,
          businessKey: null,
          instanceVersion: 3,
          nodeId: 'approve',
          nodeName: null,
          prompt: 'ok?',
          assignee: null,
          form: null,
          since: 1,
          timeoutAt: null,
          attempt: 1,
        },
      ];
      const f = fakeApi({
        'instance:approvals': () => ok({ items, total: items.length }),
        'instance:approve': () => ok({ id: 1, status: 'RUNNING', version: 4 }),
      });
      const s = createApprovalsStore(f.api, { actor: () => 'manager', refreshIntervalMs: 100 });
      await s.getState().load();
      expect(s.getState().total).toBe(1);
      s.getState().applyBatch(batch(1, [{ type: 'approval.requested', instanceId: 2, nodeId: 'approve' }]));
      s.getState().applyBatch(batch(2, [{ type: 'approval.requested', instanceId: 3, nodeId: 'approve' }]));
      await vi.advanceTimersByTimeAsync(150);
      expect(f.called('instance:approvals')).toHaveLength(2);
      const decided = s
        .getState()
        .decide(items[0] ?? { instanceId: 0, nodeId: '' }, true, { costCenter: 'CC-7' }, 'fine');
      items.length = 0;
      expect(await decided).toBe(true);
      expect(f.called('instance:approve')[0]).toEqual({
        id: 1,
        nodeId: 'approve',
        approved: true,
        data: { costCenter: 'CC-7' },
        comment: 'fine',
        actor: 'manager',
      });
      expect(s.getState().items).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('dashboard store', () => {
  it('asks for the metrics and a series of the chosen range, in aligned buckets', async () => {
    const f = fakeApi({
      'metrics:get': () =>
        ok({
          counts: { COMPLETED: 3 },
          queue: {},
          durations: [],
          failures: [],
          deadLetters: [],
          oldestWaiting: null,
        }),
      'metrics:series': (input) =>
        ok({ from: input.from, to: input.to, bucketMs: input.bucketMs, points: [] }),
      'metrics:runtime': () =>
        ok({
          turns: { count: 4, meanMs: 0.3, p50Ms: 0.25, p99Ms: 1 },
          commits: { count: 4, meanMs: 0.2, p50Ms: 0.25, p99Ms: 0.5 },
          claimed: 7,
          started: [],
          attempts: [],
          failures: [],
          nodeDuration: [],
          dueToCommitted: [],
        }),
    });
    const s = createDashboardStore(f.api, { now: () => 10 * 3_600_000 + 30_000 });
    await s.getState().load();
    expect(f.called('metrics:series')[0]).toEqual({
      from: 9 * 3_600_000 + 60_000,
      to: 10 * 3_600_000 + 30_000,
      bucketMs: 60_000,
    });
    s.getState().setRange('24h');
    await vi.waitFor(() => expect(f.called('metrics:series')).toHaveLength(2));
    expect(f.called('metrics:series')[1]).toMatchObject({ bucketMs: 15 * 60_000 });
    expect(s.getState().metrics?.counts).toEqual({ COMPLETED: 3 });
    // and the host's own worker numbers (metrics:runtime) beside them
    expect(f.called('metrics:runtime')).toHaveLength(2);
    expect(s.getState().runtime).toMatchObject({ claimed: 7, turns: { count: 4, p99Ms: 1 } });
  });

  it('merges the active schedules\' next due times into the upcoming starts, soonest first, at most 8', async () => {
    const info = (workflow: string, id: string, upcoming: number[]) => ({
      workflow, id, cron: '* * * * *', timezone: null, overlap: 'skip', catchUp: 'none', paused: upcoming.length === 0,
      nextDueAt: upcoming[0] ?? null, upcoming, lastDueAt: null, lastInstanceId: null,
    });
    const f = fakeApi({
      'metrics:get': () => ok({ counts: {}, queue: {}, durations: [], failures: [], deadLetters: [], oldestWaiting: null }),
      'metrics:series': (input) => ok({ from: input.from, to: input.to, bucketMs: input.bucketMs, points: [] }),
      'schedule:list': () => ok([info('b', 'x', [20, 40, 60, 80, 100]), info('a', 'y', [10, 30, 50, 70, 90]), info('c', 'paused', [])]),
    });
    const s = createDashboardStore(f.api, { now: () => 0 });
    await s.getState().load();
    expect(s.getState().upcoming.map((u) => `${u.at} ${u.workflow}/${u.schedule}`)).toEqual([
      '10 a/y', '20 b/x', '30 a/y', '40 b/x', '50 a/y', '60 b/x', '70 a/y', '80 b/x',
    ]);
  });
});

describe('notices store', () => {
  it('notices a suspension and an approval request once each; clicking opens the instance', () => {
    const opened: unknown[] = [];
    const s = createNoticesStore({ open: (n) => opened.push(n.instanceId) });
    s.getState().applyBatch(
      batch(1, [
        { type: 'instance.changed', instanceId: 4, status: 'SUSPENDED' },
        { type: 'instance.changed', instanceId: 5, status: 'RUNNING' },
      ]),
    );
    s.getState().applyBatch(
      batch(2, [
        { type: 'approval.requested', instanceId: 6, nodeId: 'approve', prompt: 'Approve 3 items?' },
      ]),
    );
    s.getState().applyBatch(batch(3, [{ type: 'instance.changed', instanceId: 4, status: 'SUSPENDED' }]));
    expect(s.getState().notices.map((n) => [n.kind, n.instanceId])).toEqual([
      ['suspended', 4],
      ['approval', 6],
    ]);
    expect(s.getState().notices[1]?.body).toBe('Approve 3 items?');
    s.getState().activate(s.getState().notices[0]?.id ?? 0);
    expect(opened).toEqual([4]);
    expect(s.getState().notices).toHaveLength(1);
  });

  it('turns a burst into one summary; an OS notification that is clicked opens its instance', async () => {
    const opened: unknown[] = [];
    const s = createNoticesStore({
      open: (n) => opened.push(n.kind),
      notify: async (n) => n.kind === 'summary',
    });
    s.getState().applyBatch(
      batch(
        1,
        [10, 11, 12, 13, 14].map((id) => ({
          type: 'instance.changed' as const,
          instanceId: id,
          status: 'SUSPENDED',
        })),
      ),
    );
    expect(s.getState().notices).toHaveLength(1);
    expect(s.getState().notices[0]).toMatchObject({ kind: 'summary', title: '5 instances need a person' });
    await vi.waitFor(() => expect(opened).toEqual(['summary']));
  });

  it('in the app, clicking a notice switches to Instances and opens its instance', () => {
    const f = fakeApi({
      'instance:list': () => ok({ items: [], nextBeforeId: null, counts: {} }),
      'instance:approvals': () => ok({ items: [], total: 0 }),
    });
    const ui = createUiStore('dashboard');
    const m = createMonitorStores(f.api, ui);
    const off = connectMonitorStores(m);
    f.push(batch(1, [{ type: 'instance.changed', instanceId: 4, status: 'SUSPENDED' }]));
    m.notices.getState().activate(m.notices.getState().notices[0]?.id ?? 0);
    expect(ui.getState().view).toBe('instances');
    expect(m.list.getState().openId).toBe(4);
    off();
  });
});

describe('actor store', () => {
  it('is "you" until a name is set; the name is kept in storage and read back', () => {
    const kept = new Map<string, string>();
    const storage = {
      getItem: (k: string) => kept.get(k) ?? null,
      setItem: (k: string, v: string) => void kept.set(k, v),
    };
    const a = createActorStore(storage);
    expect(a.getState().actor).toBe('you');
    a.getState().setActor('  Grace  ');
    expect(kept.get(ACTOR_STORAGE_KEY)).toBe('Grace');
    expect(createActorStore(storage).getState().actor).toBe('Grace');
    a.getState().setActor('');
    expect(a.getState().actor).toBe('you');
  });
});
