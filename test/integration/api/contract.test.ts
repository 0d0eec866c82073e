/**
 * The API contract through the browser host, against a real engine on a temp file: every
 * channel round-trips, and bad input on every channel is a typed error naming the field, with
 * the host still up and nothing written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { channels, contract, type Channel, type Output } from '../../../engine/api/contract';
import { eventually, startTestHost, type TestHost } from '../../helpers/browser-host';
import { rowsIn } from '../../helpers/db-rows';

const root = path.resolve(import.meta.dirname, '../../..');
const readJson = (file: string): Record<string, unknown> =>
  JSON.parse(fs.readFileSync(path.join(root, file), 'utf8')) as Record<string, unknown>;
const purchase = readJson('examples/purchase-approval.workflow.json');
const suspendWf = readJson('test/fixtures/api-suspend.workflow.json');
const failWf = readJson('test/fixtures/api-fail.workflow.json');

type Instance = Output<'instance:get'>;

/** Waits until instance `id` has one of `statuses` (the host's own worker runs it). */
function waitFor(h: TestHost, id: number, statuses: readonly string[]): Promise<Instance> {
  return eventually(
    async () => {
      const inst = await h.value<Instance>('instance:get', { id });
      return statuses.includes(inst.status) ? inst : undefined;
    },
    30_000,
    `instance ${id} to be ${statuses.join('|')}`,
  );
}

/** The engine's tables (both backends have these, and only these besides PostgreSQL's runnel_schema). */
const TABLES = ['dead_letter', 'history', 'instance', 'node', 'node_state', 'schedule', 'workflow'];

/** Row counts of every table: "nothing written" means these do not change. */
async function rowCounts(h: TestHost): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of TABLES) out[name] = (await rowsIn<{ n: number }>(h.file, `SELECT count(*) AS n FROM ${name}`))[0]?.n ?? -1;
  return out;
}

describe('API contract: every channel round-trips through the browser host', () => {
  let h: TestHost;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    h = await startTestHost();
  });
  afterAll(async () => {
    await h.close();
  });

  it('node:types lists the palette with config JSON Schemas', async () => {
    const types = await h.value<Output<'node:types'>>('node:types');
    const names = types.map((t) => t.type);
    expect(names).toEqual(expect.arrayContaining(['pass', 'script', 'http', 'delay', 'approval']));
    for (const t of types) {
      expect(t.title).not.toBe('');
      expect(t.configJsonSchema).toMatchObject({ type: 'object' });
      expect(typeof t.hasCompensate).toBe('boolean');
    }
    // no input and {} are the same call
    expect(await h.value('node:types', {})).toEqual(types);
  });

  it('workflow:validate returns every problem of a bad definition, and none of a good one', async () => {
    expect(await h.value('workflow:validate', { definition: purchase })).toEqual({ ok: true, problems: [] });
    const bad = {
      name: 'bad',
      nodes: [
        { id: 'a', type: 'nope' },
        { id: 'b', type: 'pass', retyr: {} },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'a' },
      ],
    };
    const r = await h.value<Output<'workflow:validate'>>('workflow:validate', { definition: bad });
    expect(r.ok).toBe(false);
    const codes = r.problems.map((p) => p.code);
    expect(codes).toEqual(expect.arrayContaining(['UNKNOWN_TYPE', 'UNKNOWN_FIELD', 'CYCLE']));
    expect(r.problems.find((p) => p.code === 'UNKNOWN_TYPE')?.nodeId).toBe('a');
  });

  it('workflow:save makes a version only when the definition changed, and refuses an invalid one with every problem', async () => {
    const first = await h.value<Output<'workflow:save'>>('workflow:save', { definition: purchase });
    expect(first).toMatchObject({ name: 'purchase-approval', version: 1, created: true });
    // designer positions alone are no change
    const moved = { ...purchase, ui: { positions: { total: { x: 10, y: 20 } } } };
    expect(await h.value('workflow:save', { definition: moved })).toMatchObject({
      version: 1,
      created: false,
    });
    const changed = { ...purchase, description: 'changed' };
    expect(await h.value('workflow:save', { definition: changed })).toMatchObject({
      version: 2,
      created: true,
    });

    const r = await h.call('workflow:save', {
      definition: {
        name: 'broken',
        nodes: [{ id: 'x', type: 'nope', retry: { maxAttempts: 0 } }],
        edges: [{ from: 'x', to: 'y' }],
      },
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('INVALID_WORKFLOW');
    const problems = r.error.details as { code: string }[];
    expect(problems.map((p) => p.code)).toEqual(expect.arrayContaining(['UNKNOWN_TYPE', 'UNKNOWN_NODE']));
    expect(problems.length).toBeGreaterThanOrEqual(3);

    await h.value('workflow:save', { definition: suspendWf });
    await h.value('workflow:save', { definition: failWf });
  });

  it('workflow:list, workflow:versions and workflow:get read what was saved', async () => {
    const list = await h.value<Output<'workflow:list'>>('workflow:list');
    expect(list.map((w) => w.name)).toEqual(['api-fail', 'api-suspend', 'purchase-approval']);
    expect(list.find((w) => w.name === 'purchase-approval')).toMatchObject({
      latestVersion: 2,
      versions: 2,
      instances: 0,
      liveInstances: 0,
    });

    const versions = await h.value<Output<'workflow:versions'>>('workflow:versions', {
      name: 'purchase-approval',
    });
    expect(versions.map((v) => v.version)).toEqual([2, 1]);

    const latest = await h.value<Output<'workflow:get'>>('workflow:get', { name: 'purchase-approval' });
    expect(latest).toMatchObject({ name: 'purchase-approval', version: 2 });
    expect(latest.definition.description).toBe('changed');
    const v1 = await h.value<Output<'workflow:get'>>('workflow:get', {
      name: 'purchase-approval',
      version: 1,
    });
    expect(v1.definition.nodes.map((n) => n.id)).toEqual(['total', 'approve', 'order', 'notify-rejection']);

    const missing = await h.call('workflow:get', { name: 'purchase-approval', version: 9 });
    expect(missing).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await h.call('workflow:versions', { name: 'nobody' })).toMatchObject({
      ok: false,
      error: { code: 'NOT_FOUND' },
    });
  });

  it('workflow:export gives JSON and YAML files, and workflow:import reads them back', async () => {
    const json = await h.value<Output<'workflow:export'>>('workflow:export', {
      name: 'purchase-approval',
      version: 1,
    });
    expect(json.fileName).toBe('purchase-approval.workflow.json');
    expect(JSON.parse(json.text)).toEqual(json.definition);
    expect(json.definition).toMatchObject({ name: 'purchase-approval', format: 1 });

    const yaml = await h.value<Output<'workflow:export'>>('workflow:export', {
      name: 'purchase-approval',
      version: 1,
      format: 'yaml',
    });
    expect(yaml.fileName).toBe('purchase-approval.workflow.yaml');
    expect(parseYaml(yaml.text)).toEqual(json.definition);

    // import YAML (by file name) and JSON (by content): parsed, validated, nothing saved
    const imported = await h.value<Output<'workflow:import'>>('workflow:import', {
      text: yaml.text,
      fileName: yaml.fileName,
    });
    expect(imported).toEqual({ definition: json.definition, ok: true, problems: [] });
    expect(await h.value('workflow:import', { text: json.text })).toMatchObject({
      ok: true,
      definition: json.definition,
    });

    // a readable file with problems comes back with them
    const withProblems = await h.value<Output<'workflow:import'>>('workflow:import', {
      text: 'name: p\nnodes:\n  - id: a\n    type: nope\n',
      fileName: 'p.yml',
    });
    expect(withProblems.ok).toBe(false);
    expect(withProblems.problems.map((p) => p.code)).toContain('UNKNOWN_TYPE');

    // a syntax error is INVALID_WORKFLOW with where it is
    const broken = await h.call('workflow:import', { text: 'name: x\nnodes: [\n', fileName: 'x.yaml' });
    expect(broken).toMatchObject({
      ok: false,
      error: { code: 'INVALID_WORKFLOW', details: { format: 'YAML', fileName: 'x.yaml' } },
    });
    expect((await h.value<Output<'workflow:list'>>('workflow:list')).map((w) => w.name)).not.toContain('p');
  });

  it('instance:start + instance:approve run the purchase approval to COMPLETED', async () => {
    const started = await h.value<Output<'instance:start'>>('instance:start', {
      workflow: 'purchase-approval',
      version: 1,
      businessKey: 'PO-1',
      actor: 'tester',
    });
    expect(started.id).toBeGreaterThan(0);
    ids.purchase = started.id;
    const waiting = await waitFor(h, started.id, ['WAITING']);
    expect(waiting.nodes.find((n) => n.id === 'approve')?.status).toBe('WAITING');
    expect(waiting.workflowVersion).toBe(1);
    expect(waiting.businessKey).toBe('PO-1');

    const approved = await h.value<Output<'instance:approve'>>('instance:approve', {
      id: started.id,
      nodeId: 'approve',
      approved: true,
      comment: 'fine',
      actor: 'manager',
      data: { costCenter: 'CC-7' },
    });
    expect(approved.id).toBe(started.id);
    const done = await waitFor(h, started.id, ['COMPLETED', 'FAILED']);
    expect(done.status).toBe('COMPLETED');
    expect(done.variables).toMatchObject({
      decision: { approved: true, comment: 'fine', actor: 'manager' },
      order: { status: 'placed' },
    });

    // approving again: no approval waits there any more
    expect(
      await h.call('instance:approve', { id: started.id, nodeId: 'approve', approved: true }),
    ).toMatchObject({ ok: false, error: { code: 'INVALID_STATE' } });
    // variables failing the inputSchema name the field
    const badVars = await h.call('instance:start', {
      workflow: 'purchase-approval',
      variables: { currency: 'euro' },
    });
    expect(badVars).toMatchObject({ ok: false, error: { code: 'INVALID_VARIABLES' } });
    if (!badVars.ok) expect(badVars.error.message).toContain('currency');
  });

  it('instance:resume carries a SUSPENDED instance on with edited variables', async () => {
    const { id } = await h.value<Output<'instance:start'>>('instance:start', {
      workflow: 'api-suspend',
      variables: { ok: false },
    });
    ids.suspended = id;
    const suspended = await waitFor(h, id, ['SUSPENDED']);
    expect(suspended.suspension).toMatchObject({ kind: 'incident', nodeId: 'check' });

    // a stale expectedVersion is refused
    expect(
      await h.call('instance:resume', { id, action: 'retry', expectedVersion: suspended.version + 5 }),
    ).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
    const resumed = await h.value<Output<'instance:resume'>>('instance:resume', {
      id,
      action: 'retry',
      variables: { ok: true },
      expectedVersion: suspended.version,
      actor: 'ops',
    });
    expect(resumed.id).toBe(id);
    expect(resumed.version).toBeGreaterThan(suspended.version);
    const done = await waitFor(h, id, ['COMPLETED', 'FAILED', 'SUSPENDED']);
    expect(done.status).toBe('COMPLETED');
    expect(await h.call('instance:resume', { id, action: 'skip' })).toMatchObject({
      ok: false,
      error: { code: 'INVALID_STATE' },
    });
  });

  it('instance:retry runs a FAILED instance again from its failed node', async () => {
    const { id } = await h.value<Output<'instance:start'>>('instance:start', { workflow: 'api-fail' });
    ids.failed = id;
    const failed = await waitFor(h, id, ['FAILED']);
    expect(failed.nodes.find((n) => n.id === 'boom')?.status).toBe('FAILED');
    const retried = await h.value<Output<'instance:retry'>>('instance:retry', { id, actor: 'ops' });
    expect(retried.id).toBe(id);
    expect(retried.version).toBeGreaterThan(failed.version);
    // it fails again (the script always throws), after a second attempt
    await eventually(async () => {
      const inst = await h.value<Instance>('instance:get', { id });
      return inst.status === 'FAILED' && (inst.nodes.find((n) => n.id === 'boom')?.attempt ?? 0) >= 2
        ? inst
        : undefined;
    });
    const history = await h.value<Output<'instance:history'>>('instance:history', { id });
    expect(history.events.map((e) => e.type)).toContain('instance.retried');
    expect(history.events.find((e) => e.type === 'instance.retried')?.actor).toBe('ops');
  });

  it('instance:cancel ends a waiting instance, and refuses an ended one', async () => {
    const { id } = await h.value<Output<'instance:start'>>('instance:start', {
      workflow: 'purchase-approval',
    });
    ids.cancelled = id;
    await waitFor(h, id, ['WAITING']);
    const cancelled = await h.value<Output<'instance:cancel'>>('instance:cancel', {
      id,
      compensate: true,
      actor: 'ops',
    });
    expect(cancelled.id).toBe(id);
    const ended = await waitFor(h, id, ['CANCELLED']);
    expect(ended.endedAt).not.toBeNull();
    expect(await h.call('instance:cancel', { id })).toMatchObject({
      ok: false,
      error: { code: 'INVALID_STATE' },
    });
    expect(await h.call('instance:get', { id: 999_999 })).toMatchObject({
      ok: false,
      error: { code: 'NOT_FOUND' },
    });
  });

  it('instance:list filters by status, workflow, version, time and text, pages by beforeId, and counts by status', async () => {
    const all = await h.value<Output<'instance:list'>>('instance:list');
    expect(all.items.map((i) => i.id)).toEqual([ids.cancelled, ids.failed, ids.suspended, ids.purchase]);
    expect(all.nextBeforeId).toBeNull();
    expect(all.counts).toEqual({ COMPLETED: 2, FAILED: 1, CANCELLED: 1 });

    const completed = await h.value<Output<'instance:list'>>('instance:list', { status: ['COMPLETED'] });
    expect(completed.items.map((i) => i.id)).toEqual([ids.suspended, ids.purchase]);
    // counts ignore the status filter (they are the chips' numbers)
    expect(completed.counts).toEqual(all.counts);

    const purchases = await h.value<Output<'instance:list'>>('instance:list', {
      workflow: 'purchase-approval',
      status: ['COMPLETED', 'CANCELLED'],
    });
    expect(purchases.items.map((i) => i.id)).toEqual([ids.cancelled, ids.purchase]);
    expect(purchases.counts).toEqual({ COMPLETED: 1, CANCELLED: 1 });
    const v1 = await h.value<Output<'instance:list'>>('instance:list', {
      workflow: 'purchase-approval',
      version: 1,
    });
    expect(v1.items.map((i) => i.id)).toEqual([ids.purchase]);

    const byKey = await h.value<Output<'instance:list'>>('instance:list', {
      text: 'PO-1',
      withCounts: false,
    });
    expect(byKey.items.map((i) => i.id)).toEqual([ids.purchase]);
    expect(byKey.counts).toBeUndefined();
    const byId = await h.value<Output<'instance:list'>>('instance:list', { text: String(ids.failed) });
    expect(byId.items.map((i) => i.id)).toEqual([ids.failed]);

    const first = all.items[all.items.length - 1];
    const last = all.items[0];
    if (!first || !last) throw new Error('no instances');
    const window = await h.value<Output<'instance:list'>>('instance:list', {
      createdFrom: first.createdAt,
      createdTo: last.createdAt,
    });
    expect(window.items).toHaveLength(4);
    expect(
      (await h.value<Output<'instance:list'>>('instance:list', { createdFrom: last.createdAt + 1 })).items,
    ).toHaveLength(0);

    // keyset paging, two at a time
    const seen: number[] = [];
    let beforeId: number | undefined;
    for (let page = 0; page < 5; page++) {
      const r: Output<'instance:list'> = await h.value('instance:list', {
        limit: 2,
        ...(beforeId === undefined ? {} : { beforeId }),
      });
      seen.push(...r.items.map((i) => i.id));
      if (r.nextBeforeId === null) break;
      beforeId = r.nextBeforeId;
    }
    expect(seen).toEqual(all.items.map((i) => i.id));
  });

  it("instance:history pages an instance's events, oldest first", async () => {
    const id = ids.purchase;
    if (id === undefined) throw new Error('no purchase instance');
    const full = await h.value<Output<'instance:history'>>('instance:history', { id });
    expect(full.nextAfterId).toBeNull();
    const types = full.events.map((e) => e.type);
    expect(types[0]).toBe('instance.created');
    expect(types).toContain('instance.completed');
    expect(full.events.map((e) => e.id)).toEqual([...full.events.map((e) => e.id)].sort((a, b) => a - b));

    const paged: number[] = [];
    let afterId = 0;
    for (;;) {
      const r: Output<'instance:history'> = await h.value('instance:history', { id, afterId, limit: 3 });
      paged.push(...r.events.map((e) => e.id));
      if (r.nextAfterId === null) break;
      afterId = r.nextAfterId;
    }
    expect(paged).toEqual(full.events.map((e) => e.id));
    expect(await h.call('instance:history', { id: 999_999 })).toMatchObject({
      ok: false,
      error: { code: 'NOT_FOUND' },
    });
  });

  it('metrics:get counts by status, with durations and failures per workflow', async () => {
    const m = await h.value<Output<'metrics:get'>>('metrics:get');
    expect(m.counts).toEqual({ COMPLETED: 2, FAILED: 1, CANCELLED: 1 });
    expect(m.queue).toMatchObject({ pending: 0 });
    expect(m.durations.map((d) => d.workflow)).toEqual(
      expect.arrayContaining(['purchase-approval', 'api-suspend']),
    );
    expect(m.failures.find((f) => f.workflow === 'api-fail')).toMatchObject({ failed: 1 });
    const list = await h.value<Output<'workflow:list'>>('workflow:list');
    expect(list.find((w) => w.name === 'purchase-approval')).toMatchObject({
      instances: 2,
      liveInstances: 0,
    });
    // nothing waits now; dead letters name their workflow
    expect(m.oldestWaiting).toBeNull();
    expect(m.deadLetters.find((d) => d.workflow === 'api-fail')).toMatchObject({ node_id: 'boom' });
  });

  it('instance:list answers "why is it stuck" per row: current node, attempt n of m, waiting for, reason', async () => {
    const failed = await h.value<Output<'instance:list'>>('instance:list', { status: ['FAILED'] });
    expect(failed.items).toHaveLength(1);
    expect(failed.items[0]).toMatchObject({ id: ids.failed, currentNodes: ['boom'], waitingFor: null, nextRetryAt: null });
    expect(failed.items[0]?.attempt).toBeGreaterThanOrEqual(2);
    expect(failed.items[0]?.reason).toMatch(/boom|fail/i);
    // by node, by id list, and rows newer than an id (oldest first)
    expect((await h.value<Output<'instance:list'>>('instance:list', { node: 'boom' })).items.map((i) => i.id)).toEqual([ids.failed]);
    const byIds = await h.value<Output<'instance:list'>>('instance:list', { ids: [ids.purchase ?? 0, ids.cancelled ?? 0] });
    expect(byIds.items.map((i) => i.id)).toEqual([ids.cancelled, ids.purchase]);
    const newer = await h.value<Output<'instance:list'>>('instance:list', { afterId: ids.purchase ?? 0 });
    expect(newer.items.map((i) => i.id)).toEqual([ids.suspended, ids.failed, ids.cancelled]);
  });

  it('instance:approvals lists waiting approvals with prompt, assignee and since; the list and metrics see them waiting', async () => {
    const { id } = await h.value<Output<'instance:start'>>('instance:start', { workflow: 'purchase-approval', businessKey: 'PO-9' });
    ids.waiting = id;
    await waitFor(h, id, ['WAITING']);
    const inbox = await h.value<Output<'instance:approvals'>>('instance:approvals');
    expect(inbox.total).toBe(1);
    expect(inbox.items[0]).toMatchObject({ instanceId: id, nodeId: 'approve', nodeName: 'Manager approval', assignee: 'purchasing-manager', businessKey: 'PO-9', workflowVersion: 2 });
    expect(inbox.items[0]?.prompt).toMatch(/^Approve 3 line item\(s\)/);
    expect(inbox.items[0]?.form).toMatchObject({ type: 'object' });
    expect(inbox.items[0]?.since).toBeGreaterThan(0);
    expect(inbox.items[0]?.timeoutAt).toBeGreaterThan(inbox.items[0]?.since ?? 0);
    expect((await h.value<Output<'instance:approvals'>>('instance:approvals', { workflow: 'api-fail' })).total).toBe(0);

    const waiting = await h.value<Output<'instance:list'>>('instance:list', { waitingFor: 'approval' });
    expect(waiting.items.map((i) => i.id)).toEqual([id]);
    expect(waiting.items[0]).toMatchObject({ currentNodes: ['approve'], waitingFor: 'approval', attempt: 1, maxAttempts: 1 });
    expect(waiting.counts).toEqual({ WAITING: 1 });
    const m = await h.value<Output<'metrics:get'>>('metrics:get');
    expect(m.oldestWaiting).toMatchObject({ id, waitingFor: 'approval', currentNodes: ['approve'] });
  });

  it('instance:bulk counts first, then touches exactly that set, each recorded with its actor', async () => {
    const dry = await h.value<Output<'instance:bulk'>>('instance:bulk', { action: 'cancel', filter: { workflow: 'purchase-approval' } });
    expect(dry).toMatchObject({ action: 'cancel', dryRun: true, matched: 1, sample: [ids.waiting], affected: 0 });
    const retryDry = await h.value<Output<'instance:bulk'>>('instance:bulk', { action: 'retry', filter: {}, dryRun: true });
    expect(retryDry).toMatchObject({ matched: 1, sample: [ids.failed] });
    // an instance started after the preview is not touched
    const { id: later } = await h.value<Output<'instance:start'>>('instance:start', { workflow: 'purchase-approval' });
    await waitFor(h, later, ['WAITING']);
    const done = await h.value<Output<'instance:bulk'>>('instance:bulk', { action: 'cancel', filter: { workflow: 'purchase-approval' }, dryRun: false, upToId: dry.upToId, actor: 'bulk-op' });
    expect(done).toMatchObject({ dryRun: false, matched: 1, affected: 1, skipped: 0 });
    expect((await waitFor(h, ids.waiting ?? 0, ['CANCELLED'])).status).toBe('CANCELLED');
    expect((await h.value<Instance>('instance:get', { id: later })).status).toBe('WAITING');
    const history = await h.value<Output<'instance:history'>>('instance:history', { id: ids.waiting ?? 0 });
    expect(history.events.find((e) => e.type === 'instance.cancel_requested')?.actor).toBe('bulk-op');
    await h.value('instance:cancel', { id: later });
  });

  it('metrics:series buckets throughput and P50/P99 over time from the instances\' timestamps', async () => {
    const all = await h.value<Output<'instance:list'>>('instance:list', { withCounts: false });
    const first = Math.min(...all.items.map((i) => i.createdAt));
    const r = await h.value<Output<'metrics:series'>>('metrics:series', { from: first - 60_000, bucketMs: 60_000 });
    expect(r.bucketMs).toBe(60_000);
    expect(r.points.length).toBeGreaterThanOrEqual(2);
    expect(r.points.every((p, i) => p.t === r.from + i * 60_000)).toBe(true);
    const sum = (k: 'completed' | 'failed' | 'cancelled' | 'started') => r.points.reduce((a, p) => a + p[k], 0);
    expect(sum('completed')).toBe(2);
    expect(sum('failed')).toBe(1);
    expect(sum('started')).toBe(all.items.length);
    const withP = r.points.filter((p) => p.p50Ms !== null);
    expect(withP.length).toBeGreaterThan(0);
    expect(withP.every((p) => (p.p99Ms ?? 0) >= (p.p50Ms ?? 0))).toBe(true);
    // the default is the last hour in one-minute buckets; too many buckets are refused
    expect((await h.value<Output<'metrics:series'>>('metrics:series')).points).toHaveLength(60);
    expect(await h.call('metrics:series', { from: 0, bucketMs: 1000 })).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT' } });
  });

  it('instance:delete deletes an ended instance with its rows, and refuses a live one and a missing one', async () => {
    const { id: live } = await h.value<Output<'instance:start'>>('instance:start', { workflow: 'purchase-approval' });
    await waitFor(h, live, ['WAITING']);
    expect(await h.call('instance:delete', { id: live })).toMatchObject({ ok: false, error: { code: 'INVALID_STATE', details: { id: live, status: 'WAITING' } } });
    const id = ids.cancelled ?? 0;
    const history = (await rowsIn<{ n: number }>(h.file, 'SELECT count(*) AS n FROM history WHERE instance_id = ?', [id]))[0]?.n;
    const r = await h.value<Output<'instance:delete'>>('instance:delete', { id });
    expect(r).toMatchObject({ id, deleted: { instances: 1, history, children: 0 } });
    expect(r.deleted.nodeStates).toBeGreaterThan(0);
    expect(await h.call('instance:get', { id })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await h.call('instance:delete', { id })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect((await h.value<Instance>('instance:get', { id: live })).status).toBe('WAITING');
    await h.value('instance:cancel', { id: live });
  });
});

describe('API contract: the designer\'s workflow channels (positions, rename, delete)', () => {
  let h: TestHost;
  beforeAll(async () => {
    h = await startTestHost();
  });
  afterAll(async () => {
    await h.close();
  });

  it('workflow:save keeps moved positions without a new version; a save without ui keeps them too', async () => {
    // given
    const first = await h.value<Output<'workflow:save'>>('workflow:save', { definition: purchase });
    // when
    const moved = { ...purchase, ui: { positions: { total: { x: 10, y: 20 } } } };
    const again = await h.value<Output<'workflow:save'>>('workflow:save', { definition: moved });
    const { ui: _ui, ...bare } = purchase;
    const withoutUi = await h.value<Output<'workflow:save'>>('workflow:save', { definition: bare });
    // then
    expect(again).toMatchObject({ version: first.version, created: false });
    expect(withoutUi).toMatchObject({ version: first.version, created: false });
    const got = await h.value<Output<'workflow:get'>>('workflow:get', { name: 'purchase-approval' });
    expect(got.definition.ui).toEqual({ positions: { total: { x: 10, y: 20 } } });
  });

  it('workflow:rename moves every version and its instances; refuses a taken name', async () => {
    // given: two versions, one finished instance, and another workflow
    await h.value('workflow:save', { definition: { ...purchase, description: 'v2' } });
    const started = await h.value<Output<'instance:start'>>('instance:start', { workflow: 'purchase-approval', variables: { requester: 'Ada' } });
    await waitFor(h, started.id, ['WAITING']);
    await h.value('instance:approve', { id: started.id, nodeId: 'approve', approved: true });
    await waitFor(h, started.id, ['COMPLETED']);
    await h.value('workflow:save', { definition: suspendWf });
    // when
    const renamed = await h.value<Output<'workflow:rename'>>('workflow:rename', { name: 'purchase-approval', newName: 'buy 🛒 承認' });
    // then
    expect(renamed).toEqual({ name: 'buy 🛒 承認', versions: 2 });
    const names = (await h.value<Output<'workflow:list'>>('workflow:list')).map((w) => w.name);
    expect(names).toEqual(['api-suspend', 'buy 🛒 承認']);
    const v1 = await h.value<Output<'workflow:get'>>('workflow:get', { name: 'buy 🛒 承認', version: 1 });
    expect(v1.definition.name).toBe('buy 🛒 承認');
    expect(await h.value<Output<'instance:get'>>('instance:get', { id: started.id })).toMatchObject({ workflow: 'buy 🛒 承認', workflowVersion: 2 });
    expect(await h.call('workflow:rename', { name: 'buy 🛒 承認', newName: 'api-suspend' })).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
    expect(await h.call('workflow:rename', { name: 'nobody', newName: 'x' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    // a rename changes no meaning: saving the renamed definition again makes no version
    const same = await h.value<Output<'workflow:save'>>('workflow:save', { definition: { ...v1.definition, description: 'v2' } });
    expect(same).toMatchObject({ version: 2, created: false });
  });

  it('workflow:delete refuses while an instance is live, then hides the workflow; the name is free again', async () => {
    // given: a live (waiting) instance
    const live = await h.value<Output<'instance:start'>>('instance:start', { workflow: 'buy 🛒 承認', variables: { requester: 'Bo' } });
    await waitFor(h, live.id, ['WAITING']);
    // when / then: refused, naming the count
    const refused = await h.call('workflow:delete', { name: 'buy 🛒 承認' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'INVALID_STATE', details: { liveInstances: 1 } } });
    // when the instance ends, the delete goes through
    await h.value('instance:cancel', { id: live.id });
    expect(await h.value<Output<'workflow:delete'>>('workflow:delete', { name: 'buy 🛒 承認' })).toEqual({ name: 'buy 🛒 承認', versions: 2 });
    // then: gone by name, the finished instances still read with their version
    expect((await h.value<Output<'workflow:list'>>('workflow:list')).map((w) => w.name)).toEqual(['api-suspend']);
    expect(await h.call('workflow:get', { name: 'buy 🛒 承認' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await h.call('instance:start', { workflow: 'buy 🛒 承認' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await h.value<Output<'instance:get'>>('instance:get', { id: live.id })).toMatchObject({ status: 'CANCELLED', workflow: 'buy 🛒 承認', workflowVersion: 2 });
    expect(await h.call('workflow:delete', { name: 'buy 🛒 承認' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    // a new workflow of the name numbers its versions after the deleted ones
    const reborn = await h.value<Output<'workflow:save'>>('workflow:save', { definition: { ...purchase, name: 'buy 🛒 承認' } });
    expect(reborn).toMatchObject({ version: 3, created: true });
    expect((await h.value<Output<'workflow:versions'>>('workflow:versions', { name: 'buy 🛒 承認' })).map((v) => v.version)).toEqual([3]);
    // renaming onto a name only deleted workflows used is refused (their instances still show it)
    await h.value('workflow:delete', { name: 'buy 🛒 承認' });
    expect(await h.call('workflow:rename', { name: 'api-suspend', newName: 'buy 🛒 承認' })).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
  });
});

/** Bad payloads per channel, each with the field path its error must name. */
const HUGE = 'x'.repeat(5 * 1024 * 1024 + 10);
const badInputs: Record<Channel, { payload: unknown; field: string }[]> = {
  'workflow:list': [
    { payload: { extra: 1 }, field: 'extra' },
    { payload: 'all', field: '(input)' },
  ],
  'workflow:get': [
    { payload: {}, field: 'name' },
    { payload: { name: 5 }, field: 'name' },
    { payload: { name: 'n'.repeat(201) }, field: 'name' },
    { payload: { name: 'purchase-approval', version: 'one' }, field: 'version' },
    { payload: { name: 'purchase-approval', version: 1.5 }, field: 'version' },
  ],
  'workflow:versions': [
    { payload: {}, field: 'name' },
    { payload: { name: ['a'] }, field: 'name' },
  ],
  'workflow:save': [
    { payload: {}, field: 'definition' },
    { payload: { definition: 'name: x' }, field: 'definition' },
    { payload: { definition: [purchase] }, field: 'definition' },
    { payload: { definition: { ...purchase, description: HUGE } }, field: 'definition' },
    { payload: { definition: purchase, force: true }, field: 'force' },
  ],
  'workflow:validate': [
    { payload: { definition: null }, field: 'definition' },
    { payload: { definition: { ...purchase, description: HUGE } }, field: 'definition' },
  ],
  'workflow:export': [
    { payload: { format: 'json' }, field: 'name' },
    { payload: { name: 'purchase-approval', format: 'xml' }, field: 'format' },
  ],
  'workflow:import': [
    { payload: {}, field: 'text' },
    { payload: { text: 5 }, field: 'text' },
    { payload: { text: HUGE }, field: 'text' },
    { payload: { text: 'name: x', fileName: `${'f'.repeat(300)}.yaml` }, field: 'fileName' },
  ],
  'workflow:rename': [
    { payload: { name: 'purchase-approval' }, field: 'newName' },
    { payload: { name: 'purchase-approval', newName: '' }, field: 'newName' },
    { payload: { name: 'purchase-approval', newName: 'n'.repeat(201) }, field: 'newName' },
  ],
  'workflow:delete': [
    { payload: {}, field: 'name' },
    { payload: { name: 'purchase-approval', force: true }, field: 'force' },
  ],
  'node:types': [
    { payload: { group: 'Core' }, field: 'group' },
    { payload: [], field: '(input)' },
  ],
  'instance:start': [
    { payload: {}, field: 'workflow' },
    { payload: { workflow: 'purchase-approval', variables: [1] }, field: 'variables' },
    { payload: { workflow: 'purchase-approval', variables: { note: HUGE } }, field: 'variables' },
    { payload: { workflow: 'purchase-approval', businessKey: 'k'.repeat(201) }, field: 'businessKey' },
    { payload: { workflow: 'purchase-approval', businessKey: '' }, field: 'businessKey' },
    { payload: { workflow: 'purchase-approval', version: 0 }, field: 'version' },
    { payload: { workflow: 'purchase-approval', priority: 1.5 }, field: 'priority' },
    { payload: { workflow: 'purchase-approval', priority: 1_000_001 }, field: 'priority' },
    { payload: { workflow: 'purchase-approval', test: 'yes' }, field: 'test' },
    { payload: { workflow: 'purchase-approval', test: true, pins: [1] }, field: 'pins' },
  ],
  'instance:list': [
    { payload: { status: ['NOPE'] }, field: 'status[0]' },
    { payload: { status: 'RUNNING' }, field: 'status' },
    { payload: { limit: 0 }, field: 'limit' },
    { payload: { limit: 5000 }, field: 'limit' },
    { payload: { text: 't'.repeat(10_001) }, field: 'text' },
    { payload: { beforeId: -1 }, field: 'beforeId' },
    { payload: { createdFrom: 'yesterday' }, field: 'createdFrom' },
    { payload: { waitingFor: 'godot' }, field: 'waitingFor' },
    { payload: { ids: [0] }, field: 'ids[0]' },
  ],
  'instance:delete': [
    { payload: {}, field: 'id' },
    { payload: { id: 'one' }, field: 'id' },
    { payload: { id: -3 }, field: 'id' },
    { payload: { id: 1, force: true }, field: 'force' },
  ],
  'instance:get': [
    { payload: {}, field: 'id' },
    { payload: { id: '1' }, field: 'id' },
    { payload: { id: 1.5 }, field: 'id' },
    { payload: { id: 0 }, field: 'id' },
  ],
  'instance:stateAt': [
    { payload: { id: 1 }, field: 'at' },
    { payload: { id: 1, at: true }, field: 'at' },
    { payload: { id: 1, at: 0 }, field: 'at' },
    { payload: { at: 1 }, field: 'id' },
  ],
  'instance:fork': [
    { payload: { id: 1 }, field: 'at' },
    { payload: { id: 1, at: 1.5 }, field: 'at' },
    { payload: { id: 'one', at: 1 }, field: 'id' },
  ],
  'instance:history': [
    { payload: { id: 1, limit: 0 }, field: 'limit' },
    { payload: { id: 1, afterId: -1 }, field: 'afterId' },
  ],
  'instance:resume': [
    { payload: { id: 1 }, field: 'action' },
    { payload: { id: 1, action: 'jump' }, field: 'action' },
    { payload: { id: 1, action: 'retry', variables: 'x' }, field: 'variables' },
    { payload: { id: 1, action: 'skip', result: HUGE }, field: 'result' },
  ],
  'instance:retry': [
    { payload: {}, field: 'id' },
    { payload: { id: 1, expectedVersion: 'v' }, field: 'expectedVersion' },
  ],
  'instance:cancel': [
    { payload: { id: 1, compensate: 'yes' }, field: 'compensate' },
    { payload: { id: 1, actor: 'a'.repeat(201) }, field: 'actor' },
    { payload: { id: 1, actor: 'me\u001b[2Jx' }, field: 'actor' },
  ],
  'instance:approve': [
    { payload: { id: 1, approved: true }, field: 'nodeId' },
    { payload: { id: 1, nodeId: 'approve' }, field: 'approved' },
    { payload: { id: 1, nodeId: 'approve', approved: 'yes' }, field: 'approved' },
    { payload: { id: 1, nodeId: 'n'.repeat(129), approved: true }, field: 'nodeId' },
    { payload: { id: 1, nodeId: 'approve', approved: true, comment: 'c'.repeat(10_001) }, field: 'comment' },
  ],
  'instance:pause': [
    { payload: {}, field: 'id' },
    { payload: { id: 0 }, field: 'id' },
    { payload: { id: 1, extra: true }, field: 'extra' },
  ],
  'instance:unpause': [
    { payload: { id: 'one' }, field: 'id' },
    { payload: { id: 1, actor: 5 }, field: 'actor' },
  ],
  'instance:signal': [
    { payload: { event: 'paid' }, field: 'id' },
    { payload: { id: 1, businessKey: 'order-1', event: 'paid' }, field: 'id' },
    { payload: { id: 1 }, field: 'event' },
    { payload: { id: 1, event: '' }, field: 'event' },
    { payload: { id: 1, event: 'e'.repeat(201) }, field: 'event' },
    { payload: { id: 1, event: 'paid', key: 5 }, field: 'key' },
    { payload: { businessKey: 'k'.repeat(201), event: 'paid' }, field: 'businessKey' },
    { payload: { id: 1, event: 'ev\u001bx' }, field: 'event' },
    { payload: { id: 1, event: ' ' }, field: 'event' },
    { payload: { id: 1, event: 'paid', key: 'k\nk' }, field: 'key' },
    { payload: { id: 1, event: 'paid', data: HUGE }, field: 'data' },
  ],
  'instance:deleteTestRuns': [{ payload: { all: true }, field: 'all' }],
  'metrics:get': [{ payload: { since: 0 }, field: 'since' }],
  'storage:health': [{ payload: { verbose: true }, field: 'verbose' }],
  'instance:approvals': [
    { payload: { limit: 0 }, field: 'limit' },
    { payload: { workflow: 5 }, field: 'workflow' },
  ],
  'instance:bulk': [
    { payload: {}, field: 'action' },
    { payload: { action: 'delete' }, field: 'action' },
    { payload: { action: 'cancel', filter: { status: ['NOPE'] } }, field: 'filter.status[0]' },
    { payload: { action: 'cancel', filter: { nope: 1 } }, field: 'filter.nope' },
    { payload: { action: 'retry', dryRun: 'no' }, field: 'dryRun' },
    { payload: { action: 'cancel', dryRun: false, upToId: -1 }, field: 'upToId' },
  ],
  'metrics:series': [
    { payload: { bucketMs: 10 }, field: 'bucketMs' },
    { payload: { from: 'an hour ago' }, field: 'from' },
  ],
  'changes:read': [
    { payload: { after: -1 }, field: 'after' },
    { payload: { after: 1.5 }, field: 'after' },
    { payload: { limit: 0 }, field: 'limit' },
    { payload: { limit: 10_001 }, field: 'limit' },
    { payload: { consumer: '' }, field: 'consumer' },
    { payload: { workflow: 7 }, field: 'workflow' },
    { payload: { since: 3 }, field: 'since' },
  ],
  'changes:ack': [
    { payload: { cursor: 1 }, field: 'consumer' },
    { payload: { consumer: 'export' }, field: 'cursor' },
    { payload: { consumer: 'export', cursor: -2 }, field: 'cursor' },
    { payload: { consumer: 'n'.repeat(201), cursor: 1 }, field: 'consumer' },
  ],
  'changes:consumers': [{ payload: { name: 'export' }, field: 'name' }],
  'changes:forget': [
    { payload: {}, field: 'consumer' },
    { payload: { consumer: ['export'] }, field: 'consumer' },
    // a name that would drive the terminal that prints it (runnel consumers)
    { payload: { consumer: 'evil\u001b[31mred' }, field: 'consumer' },
    { payload: { consumer: '   ' }, field: 'consumer' },
  ],
  'database:info': [{ payload: { verbose: true }, field: 'verbose' }],
  'metrics:runtime': [{ payload: { reset: true }, field: 'reset' }],
  'database:check': [{ payload: { quick: true }, field: 'quick' }],
  'database:backup': [
    { payload: {}, field: 'dest' },
    { payload: { dest: '   ' }, field: 'dest' },
    { payload: { dest: 5 }, field: 'dest' },
    { payload: { dest: 'copy.db', force: 'yes' }, field: 'force' },
  ],
  'database:vacuum': [{ payload: { full: true }, field: 'full' }],
  'schedule:list': [
    { payload: { workflow: 5 }, field: 'workflow' },
    { payload: { workflow: '' }, field: 'workflow' },
    { payload: { workflow: 'w', extra: true }, field: 'extra' },
  ],
  'schedule:pause': [
    { payload: {}, field: 'workflow' },
    { payload: { workflow: 'w' }, field: 'id' },
    { payload: { workflow: 'w', id: 7 }, field: 'id' },
  ],
  'schedule:resume': [
    { payload: { id: 'nightly' }, field: 'workflow' },
    { payload: { workflow: 'w', id: '' }, field: 'id' },
  ],
  'schedule:trigger': [
    { payload: { workflow: ['w'], id: 'nightly' }, field: 'workflow' },
    { payload: { workflow: 'w', id: 'nightly', actor: '' }, field: 'actor' },
  ],
};

describe('API contract: bad input on every channel', () => {
  let h: TestHost;
  let waitingId: number;

  beforeAll(async () => {
    // a larger body limit, so the contract's own field limits (5 MiB) are what refuses huge strings
    h = await startTestHost({ bodyLimitBytes: 16 * 1024 * 1024 });
    await h.value('workflow:save', { definition: purchase });
    waitingId = (await h.value<Output<'instance:start'>>('instance:start', { workflow: 'purchase-approval' }))
      .id;
    await waitFor(h, waitingId, ['WAITING']);
  });
  afterAll(async () => {
    await h.close();
  });

  it('the table covers every channel of the contract', () => {
    expect(Object.keys(badInputs).sort()).toEqual([...channels].sort());
    expect(channels).toEqual(Object.keys(contract));
  });

  it('each bad payload is BAD_REQUEST naming its field; the host stays up and nothing is written', async () => {
    const before = await rowCounts(h);
    for (const [channel, cases] of Object.entries(badInputs)) {
      for (const { payload, field } of cases) {
        const r = await h.call(channel, payload);
        const label = `${channel} ${JSON.stringify(payload).slice(0, 80)}`;
        expect(r.ok, label).toBe(false);
        if (r.ok) continue;
        expect(r.error.code, label).toBe('BAD_REQUEST');
        const issues = (r.error.details as { issues: { path: string; message: string }[] }).issues;
        expect(
          issues.map((i) => i.path),
          label,
        ).toContain(field);
        expect(r.error.message, label).toContain(`${channel}: `);
        // the message names a field too (the first issue's)
        expect(r.error.message, label).toContain(`${issues[0]?.path}: `);
        // a huge string is never echoed back
        expect(JSON.stringify(r).length, label).toBeLessThan(20_000);
      }
    }
    expect(await rowCounts(h)).toEqual(before);
    expect(await h.value('instance:get', { id: waitingId })).toMatchObject({ status: 'WAITING' });
    const health = await fetch(`${h.base}/api/health`, {
      headers: { authorization: `Bearer ${h.server.token}` },
    });
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true, value: { status: 'ok' } });
  });

  it('unknown channels and non-JSON bodies are typed errors too', async () => {
    const before = await rowCounts(h);
    for (const channel of [
      'workflow:nope',
      'toString',
      '__proto__',
      'constructor',
      'instance:',
      'x'.repeat(500),
    ]) {
      const r = await h.call(channel, {});
      expect(r, channel).toMatchObject({ ok: false, error: { code: 'UNKNOWN_CHANNEL' } });
    }
    const res = await fetch(`${h.base}/api/workflow:list`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.server.token}` },
      body: '{"not json',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      ok: false,
      error: { code: 'BAD_REQUEST', message: 'the request body is not JSON' },
    });
    // a channel called with GET
    const get = await fetch(`${h.base}/api/workflow:list`, {
      headers: { authorization: `Bearer ${h.server.token}` },
    });
    expect(get.status).toBe(405);
    expect(await get.json()).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(await rowCounts(h)).toEqual(before);
    expect(await h.value('workflow:list')).toHaveLength(1);
  });
});
