// The renderer's zustand stores, built fresh per test over a fake API (STYLE.md: store creators
// apart from hooks).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Channel, EventBatch, InstanceSummary, Result, WorkflowSummary } from '../../../../engine/api/contract';
import type { ApiClient } from '../../../../renderer/src/api/client';
import { withErrorReporting } from '../../../../renderer/src/api/client';
import { createAppStores, connectStores } from '../../../../renderer/src/stores/app-stores';
import { createInstancesStore } from '../../../../renderer/src/stores/instances-store';
import { createUiStore, MAX_TOASTS } from '../../../../renderer/src/stores/ui-store';
import { createWorkflowsStore } from '../../../../renderer/src/stores/workflows-store';
import { exportWorkflow, importWorkflow, runCommand, type FileAccess } from '../../../../renderer/src/commands';

type Handler = (input: unknown) => Result<unknown> | Promise<Result<unknown>>;

/** A fake client: answers per channel, records calls, lets a test push batches. */
function fakeApi(handlers: Partial<Record<string, Handler>>, desktop?: Partial<Record<string, Handler>>) {
  const calls: Array<[string, unknown]> = [];
  const eventListeners = new Set<(b: EventBatch) => void>();
  const resyncListeners = new Set<() => void>();
  const answer = (table: Partial<Record<string, Handler>>) => async (channel: string, input?: unknown) => {
    calls.push([channel, input]);
    const h = table[channel];
    return h ? h(input) : { ok: false as const, error: { code: 'UNKNOWN_CHANNEL', message: `no fake for ${channel}` } };
  };
  const api: ApiClient = {
    transport: desktop ? 'electron' : 'http',
    invoke: answer(handlers) as ApiClient['invoke'],
    desktop: desktop ? (answer(desktop) as NonNullable<ApiClient['desktop']>) : undefined,
    onEvent: (l) => {
      eventListeners.add(l);
      return () => eventListeners.delete(l);
    },
    onCommand: () => () => undefined,
    onResync: (l) => {
      resyncListeners.add(l);
      return () => resyncListeners.delete(l);
    },
    onConnection: (l) => {
      l('open');
      return () => undefined;
    },
    close: () => undefined,
  };
  return {
    api,
    calls,
    push: (b: EventBatch) => eventListeners.forEach((l) => l(b)),
    resync: () => resyncListeners.forEach((l) => l()),
    called: (c: Channel | string) => calls.filter(([ch]) => ch === c),
  };
}

const summary = (name: string): WorkflowSummary => ({ name, latestVersion: 1, latestId: 1, versions: 1, updatedAt: 0, instances: 0, liveInstances: 0 });
const row = (id: number, status: string, workflow = 'quick'): InstanceSummary => ({
  id,
  workflow,
  workflowVersion: 1,
  status,
  businessKey: null,
  createdAt: 1000 + id,
  startedAt: null,
  endedAt: null,
  version: 1,
});
const ok = <T>(value: T): Result<T> => ({ ok: true, value });
const batch = (seq: number, events: EventBatch['events']): EventBatch => ({ seq, events, coalesced: 0 });

describe('ui store', () => {
  it('switches views and keeps at most the newest toasts', () => {
    const ui = createUiStore();
    expect(ui.getState().view).toBe('instances');
    ui.getState().setView('designer');
    expect(ui.getState().view).toBe('designer');
    for (let i = 0; i < MAX_TOASTS + 2; i++) ui.getState().pushToast({ code: 'C', message: `m${i}` });
    expect(ui.getState().toasts.map((t) => t.message)).toEqual(['m2', 'm3', 'm4', 'm5', 'm6']);
    ui.getState().dismissToast(ui.getState().toasts[0]?.id ?? -1);
    expect(ui.getState().toasts).toHaveLength(MAX_TOASTS - 1);
  });

  it('given an error-reporting client, every failed call becomes a toast with its code and message', async () => {
    const ui = createUiStore();
    const { api } = fakeApi({ 'workflow:list': () => ({ ok: false, error: { code: 'DATABASE_BUSY', message: 'the database is busy' } }) });
    const reporting = withErrorReporting(api, (channel, e) => ui.getState().pushToast({ channel, code: e.code, message: e.message }));
    const stores = createAppStores(reporting, ui);
    await stores.workflows.getState().load();
    expect(ui.getState().toasts).toEqual([{ id: 1, channel: 'workflow:list', code: 'DATABASE_BUSY', message: 'the database is busy' }]);
    expect(stores.workflows.getState().status).toBe('error');
  });
});

describe('workflows store', () => {
  it('loads the list and selects the first, keeping a selection that still exists', async () => {
    let list = [summary('a'), summary('b')];
    const { api } = fakeApi({ 'workflow:list': () => ok(list) });
    const store = createWorkflowsStore(api);
    await store.getState().load();
    expect(store.getState()).toMatchObject({ status: 'ready', selected: 'a' });
    store.getState().select('b');
    await store.getState().load();
    expect(store.getState().selected).toBe('b');
    list = [summary('c')];
    await store.getState().load();
    expect(store.getState().selected).toBe('c');
  });

  it('imports a file through workflow:import then workflow:save, and selects the saved workflow', async () => {
    const fake = fakeApi({
      'workflow:import': () => ok({ definition: { name: 'imported', nodes: [], edges: [] }, ok: true, problems: [] }),
      'workflow:save': () => ok({ workflowId: 3, name: 'imported', version: 1, created: true }),
      'workflow:list': () => ok([summary('a'), summary('imported')]),
    });
    const store = createWorkflowsStore(fake.api);
    await expect(store.getState().importWorkflow('{"name":"imported"}', 'x.json')).resolves.toBe('imported');
    expect(fake.called('workflow:import')).toEqual([['workflow:import', { text: '{"name":"imported"}', fileName: 'x.json' }]]);
    expect(fake.called('workflow:save')).toEqual([['workflow:save', { definition: { name: 'imported', nodes: [], edges: [] } }]]);
    expect(store.getState().selected).toBe('imported');
  });

  it('given an import whose save fails, stops there (the failure is the toast)', async () => {
    const fake = fakeApi({
      'workflow:import': () => ok({ definition: { name: 'bad' }, ok: false, problems: [{ code: 'X', message: 'm', path: [] }] }),
      'workflow:save': () => ({ ok: false, error: { code: 'INVALID_WORKFLOW', message: 'nodes: required' } }),
    });
    await expect(createWorkflowsStore(fake.api).getState().importWorkflow('name: bad')).resolves.toBeUndefined();
    expect(fake.called('workflow:list')).toEqual([]);
  });

  it('refreshes counts once after a burst of created / finished events', async () => {
    vi.useFakeTimers();
    try {
      const fake = fakeApi({ 'workflow:list': () => ok([summary('a')]) });
      const store = createWorkflowsStore(fake.api, { refreshDelayMs: 500 });
      store.getState().applyBatch(batch(1, [{ type: 'node.changed', instanceId: 1, nodeId: 'a', status: 'RUNNING' }]));
      await vi.advanceTimersByTimeAsync(600);
      expect(fake.called('workflow:list')).toHaveLength(0);
      for (let i = 0; i < 5; i++) store.getState().applyBatch(batch(i + 2, [{ type: 'instance.created', instanceId: i, workflow: 'a', version: 1 }]));
      await vi.advanceTimersByTimeAsync(600);
      expect(fake.called('workflow:list')).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('instances store', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('loads the newest instances with counts', async () => {
    const fake = fakeApi({ 'instance:list': () => ok({ items: [row(2, 'RUNNING'), row(1, 'COMPLETED')], nextBeforeId: null, counts: { RUNNING: 1, COMPLETED: 1 } }) });
    const store = createInstancesStore(fake.api, { pageSize: 25 });
    await store.getState().load();
    expect(store.getState()).toMatchObject({ status: 'ready', counts: { RUNNING: 1, COMPLETED: 1 } });
    expect(store.getState().items.map((r) => r.id)).toEqual([2, 1]);
    expect(fake.called('instance:list')).toEqual([['instance:list', { limit: 25 }]]);
  });

  it('given status events, changes rows in place without a reload, ending in the latest status', async () => {
    const fake = fakeApi({ 'instance:list': () => ok({ items: [row(2, 'PENDING'), row(1, 'RUNNING')], nextBeforeId: null }) });
    const store = createInstancesStore(fake.api, { refreshDelayMs: 300 });
    await store.getState().load();
    store.getState().applyBatch(batch(1, [{ type: 'instance.changed', instanceId: 2, status: 'RUNNING' }, { type: 'node.changed', instanceId: 2, nodeId: 'a', status: 'RUNNING' }]));
    expect(store.getState().items.find((r) => r.id === 2)?.status).toBe('RUNNING');
    store.getState().applyBatch(batch(2, [{ type: 'instance.changed', instanceId: 2, status: 'WAITING' }, { type: 'instance.changed', instanceId: 99, status: 'RUNNING' }]));
    expect(store.getState().items.map((r) => [r.id, r.status])).toEqual([
      [2, 'WAITING'],
      [1, 'RUNNING'],
    ]);
    expect(fake.called('instance:list')).toHaveLength(1);
  });

  it('given a created event, shows a placeholder row at once, then reloads it once', async () => {
    let items = [row(1, 'COMPLETED')];
    const fake = fakeApi({ 'instance:list': () => ok({ items, nextBeforeId: null }) });
    const store = createInstancesStore(fake.api, { refreshDelayMs: 300, now: () => 5 });
    await store.getState().load();
    store.getState().applyBatch(batch(1, [{ type: 'instance.created', instanceId: 2, workflow: 'quick', version: 3 }, { type: 'instance.changed', instanceId: 2, status: 'RUNNING' }]));
    expect(store.getState().items[0]).toMatchObject({ id: 2, workflow: 'quick', workflowVersion: 3, status: 'RUNNING', createdAt: 5 });
    items = [{ ...row(2, 'RUNNING'), businessKey: 'k' }, row(1, 'COMPLETED')];
    await vi.advanceTimersByTimeAsync(350);
    expect(fake.called('instance:list')).toHaveLength(2);
    expect(store.getState().items[0]).toMatchObject({ id: 2, businessKey: 'k' });
  });

  it('given an event during a reload, the reload does not bring back the older status', async () => {
    let release: (v: Result<unknown>) => void = () => undefined;
    const fake = fakeApi({ 'instance:list': () => new Promise((r) => (release = r)) });
    const store = createInstancesStore(fake.api);
    const loading = store.getState().load();
    store.getState().applyBatch(batch(1, [{ type: 'instance.finished', instanceId: 1, status: 'COMPLETED' }]));
    release(ok({ items: [row(1, 'RUNNING')], nextBeforeId: null }));
    await loading;
    expect(store.getState().items[0]?.status).toBe('COMPLETED');
  });

  it('starts an instance with its variables and shows it even before its events arrive', async () => {
    const fake = fakeApi({ 'instance:start': () => ok({ id: 7, status: 'PENDING', version: 1 }) });
    const store = createInstancesStore(fake.api);
    await expect(store.getState().start('quick', { n: 1 })).resolves.toEqual({ id: 7, status: 'PENDING', version: 1 });
    expect(fake.called('instance:start')).toEqual([['instance:start', { workflow: 'quick', variables: { n: 1 } }]]);
    expect(store.getState().items.map((r) => [r.id, r.status])).toEqual([[7, 'PENDING']]);
    store.getState().applyBatch(batch(1, [{ type: 'instance.created', instanceId: 7, workflow: 'quick', version: 1 }]));
    expect(store.getState().items.filter((r) => r.id === 7)).toHaveLength(1);
  });

  it('given a refused start, adds no row', async () => {
    const fake = fakeApi({ 'instance:start': () => ({ ok: false, error: { code: 'INVALID_VARIABLES', message: 'deviceId: required' } }) });
    const store = createInstancesStore(fake.api);
    await expect(store.getState().start('ota', {})).resolves.toBeUndefined();
    expect(store.getState().items).toEqual([]);
  });
});

describe('connectStores', () => {
  it('loads both lists, applies pushed batches, and reloads on resync', async () => {
    const fake = fakeApi({
      'workflow:list': () => ok([summary('quick')]),
      'instance:list': () => ok({ items: [row(1, 'RUNNING')], nextBeforeId: null }),
    });
    const stores = createAppStores(fake.api);
    const off = connectStores(stores);
    await vi.waitFor(() => expect(stores.instances.getState().status).toBe('ready'));
    fake.push(batch(1, [{ type: 'instance.finished', instanceId: 1, status: 'COMPLETED' }]));
    expect(stores.instances.getState().items[0]?.status).toBe('COMPLETED');
    fake.resync();
    await vi.waitFor(() => expect(fake.called('instance:list')).toHaveLength(2));
    expect(fake.called('workflow:list').length).toBeGreaterThanOrEqual(2);
    off();
  });
});

describe('commands', () => {
  const files = (picked?: { text: string; fileName: string }): FileAccess & { saved: Array<[string, string]> } => {
    const saved: Array<[string, string]> = [];
    return { saved, pickWorkflowFile: () => Promise.resolve(picked), saveFile: (n, t) => (saved.push([n, t]), Promise.resolve()) };
  };
  const importing = {
    'workflow:import': () => ok({ definition: { name: 'w' }, ok: true, problems: [] }),
    'workflow:save': () => ok({ workflowId: 1, name: 'w', version: 1, created: true }),
    'workflow:list': () => ok([summary('w')]),
    'workflow:export': () => ok({ name: 'w', version: 1, fileName: 'w.workflow.json', text: '{"name":"w"}', definition: { name: 'w' } }),
  };

  it('in a browser, imports from the picked file and exports as a download', async () => {
    const fake = fakeApi(importing);
    const stores = createAppStores(fake.api);
    const f = files({ text: '{"name":"w"}', fileName: 'w.json' });
    await expect(importWorkflow(stores, f)).resolves.toBe('w');
    await expect(exportWorkflow(stores, f)).resolves.toBe(true);
    expect(f.saved).toEqual([['w.workflow.json', '{"name":"w"}']]);
  });

  it('in the desktop app, uses the native dialogs (file:openWorkflow, file:saveWorkflow)', async () => {
    const fake = fakeApi(importing, {
      'file:openWorkflow': () => ok({ canceled: false, path: '/x/w.json', fileName: 'w.json', text: '{"name":"w"}' }),
      'file:saveWorkflow': () => ok({ canceled: false, path: '/x/w.workflow.json' }),
    });
    const stores = createAppStores(fake.api);
    const f = files(undefined);
    await runCommand('workflow.import', stores, f);
    expect(fake.called('workflow:import')).toEqual([['workflow:import', { text: '{"name":"w"}', fileName: 'w.json' }]]);
    await runCommand('workflow.export', stores, f);
    expect(fake.called('file:saveWorkflow')).toEqual([['file:saveWorkflow', { suggestedName: 'w.workflow.json', text: '{"name":"w"}' }]]);
    expect(f.saved).toEqual([]);
  });

  it('view commands switch views; New opens the Designer', async () => {
    const stores = createAppStores(fakeApi({}).api);
    await runCommand('view.dashboard', stores, files());
    expect(stores.ui.getState().view).toBe('dashboard');
    await runCommand('workflow.new', stores, files());
    expect(stores.ui.getState().view).toBe('designer');
  });
});
