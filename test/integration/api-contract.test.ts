/**
 * The API contract through the browser host, against a real engine on a temp file: every
 * channel round-trips, and bad input on every channel is a typed error naming the field, with
 * the host still up and nothing written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { channels, contract, type Channel, type Output } from '../../engine/api/contract';
import { eventually, startTestHost, type TestHost } from '../helpers/browser-host';

const root = path.resolve(import.meta.dirname, '../..');
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

/** Row counts of every table: "nothing written" means these do not change. */
function rowCounts(h: TestHost): Record<string, number> {
  const db = h.engine.db.raw;
  const tables = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
    .all() as { name: string }[];
  const out: Record<string, number> = {};
  for (const { name } of tables)
    out[name] = (db.prepare(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n;
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
  'node:types': [
    { payload: { group: 'Core' }, field: 'group' },
    { payload: [], field: '(input)' },
  ],
  'instance:start': [
    { payload: {}, field: 'workflow' },
    { payload: { workflow: 'purchase-approval', variables: [1] }, field: 'variables' },
    { payload: { workflow: 'purchase-approval', variables: { note: HUGE } }, field: 'variables' },
    { payload: { workflow: 'purchase-approval', businessKey: 'k'.repeat(201) }, field: 'businessKey' },
    { payload: { workflow: 'purchase-approval', version: 0 }, field: 'version' },
  ],
  'instance:list': [
    { payload: { status: ['NOPE'] }, field: 'status[0]' },
    { payload: { status: 'RUNNING' }, field: 'status' },
    { payload: { limit: 0 }, field: 'limit' },
    { payload: { limit: 5000 }, field: 'limit' },
    { payload: { text: 't'.repeat(10_001) }, field: 'text' },
    { payload: { beforeId: -1 }, field: 'beforeId' },
    { payload: { createdFrom: 'yesterday' }, field: 'createdFrom' },
  ],
  'instance:get': [
    { payload: {}, field: 'id' },
    { payload: { id: '1' }, field: 'id' },
    { payload: { id: 1.5 }, field: 'id' },
    { payload: { id: 0 }, field: 'id' },
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
  ],
  'instance:approve': [
    { payload: { id: 1, approved: true }, field: 'nodeId' },
    { payload: { id: 1, nodeId: 'approve' }, field: 'approved' },
    { payload: { id: 1, nodeId: 'approve', approved: 'yes' }, field: 'approved' },
    { payload: { id: 1, nodeId: 'n'.repeat(129), approved: true }, field: 'nodeId' },
    { payload: { id: 1, nodeId: 'approve', approved: true, comment: 'c'.repeat(10_001) }, field: 'comment' },
  ],
  'metrics:get': [{ payload: { since: 0 }, field: 'since' }],
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
    const before = rowCounts(h);
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
    expect(rowCounts(h)).toEqual(before);
    expect(await h.value('instance:get', { id: waitingId })).toMatchObject({ status: 'WAITING' });
    const health = await fetch(`${h.base}/api/health`, {
      headers: { authorization: `Bearer ${h.server.token}` },
    });
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true, value: { status: 'ok' } });
  });

  it('unknown channels and non-JSON bodies are typed errors too', async () => {
    const before = rowCounts(h);
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
    expect(rowCounts(h)).toEqual(before);
    expect(await h.value('workflow:list')).toHaveLength(1);
  });
});
