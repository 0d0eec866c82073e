import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, example, parseJson, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

interface InstanceJson {
  id: number;
  status: string;
  variables: Record<string, unknown>;
  nodes: Array<{ id: string; status: string; wait?: { kind: string; prompt?: string } }>;
}

const PURCHASE = example('purchase-approval.workflow.json');
const items = [
  { sku: 'SKU-1002', quantity: 12, unitPrice: 89.5 },
  { sku: 'SKU-1004', quantity: 3, unitPrice: 12.9 },
];

describe('example purchase-approval', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
  });
  afterEach(() => tmp.cleanup());

  it('waits for a person (exit 3) with the script-computed total, then `approve` takes the order branch (exit 0)', async () => {
    // Given a request with two line items
    const vars = JSON.stringify({ requester: 'Zoë 🚀', items });
    // When it runs
    const run = await runCli('run', PURCHASE, '--db', db, '--json', '--vars', vars);
    // Then it waits at the approval with the total the script computed
    expect(run.code).toBe(3);
    const waiting = parseJson<InstanceJson>(run);
    expect(waiting.status).toBe('WAITING');
    expect(waiting.variables.quote).toMatchObject({ total: 1112.7, items: 2, currency: 'EUR' });
    const approval = waiting.nodes.find((n) => n.id === 'approve');
    expect(approval?.status).toBe('WAITING');
    expect(approval?.wait?.prompt).toBe('Approve 2 line item(s) for 1112.7 EUR requested by Zoë 🚀?');

    // When a manager approves it
    const ok = await runCli(
      'approve',
      String(waiting.id),
      'approve',
      '--approve',
      '--data',
      '{"costCenter":"R&D-42"}',
      '--actor',
      'manager',
      '--wait',
      '--json',
      '--db',
      db,
    );
    // Then it completes on the order branch
    expect(ok.code).toBe(0);
    const done = parseJson<InstanceJson>(ok);
    expect(done.status).toBe('COMPLETED');
    const status = Object.fromEntries(done.nodes.map((n) => [n.id, n.status]));
    expect(status).toEqual({
      total: 'COMPLETED',
      approve: 'COMPLETED',
      order: 'COMPLETED',
      'notify-rejection': 'SKIPPED',
    });
    expect(done.variables.decision).toMatchObject({
      approved: true,
      data: { costCenter: 'R&D-42' },
      actor: 'manager',
    });
    expect(done.variables.order).toMatchObject({ status: 'placed', total: 1112.7, approvedBy: 'manager' });
  });

  it('takes the notify-rejection branch when rejected, and the decision lands in history with its actor', async () => {
    const run = await runCli('run', PURCHASE, '--db', db, '--json', '--vars', JSON.stringify({ items }));
    expect(run.code).toBe(3);
    const id = String(parseJson<InstanceJson>(run).id);
    // Without --wait, approve records the decision; a worker then carries the instance on.
    const rejected = await runCli(
      'approve',
      id,
      'approve',
      '--reject',
      '--comment',
      'over budget',
      '--actor',
      'manager',
      '--db',
      db,
    );
    expect(rejected.code).toBe(0);
    expect(rejected.stdout).toContain('rejected');
    const worker = await runCli('worker', '--until-idle', '--db', db, '--json');
    expect(worker.code).toBe(0);
    expect(parseJson(worker)).toMatchObject({ interrupted: false });
    const shown = parseJson<InstanceJson & { history: Array<{ type: string; actor: string | null }> }>(
      await runCli('show', id, '--history', '--json', '--db', db),
    );
    expect(shown.status).toBe('COMPLETED');
    expect(shown.nodes.find((n) => n.id === 'order')?.status).toBe('SKIPPED');
    expect(shown.variables.notification).toEqual({
      to: 'requester',
      message: 'Your purchase of 1112.7 EUR was rejected: over budget',
    });
    expect(shown.history.some((h) => h.type === 'approval.decided' && h.actor === 'manager')).toBe(true);
  });

  it('refuses a second decision: the approval no longer waits (exit 2)', async () => {
    const run = await runCli('run', PURCHASE, '--db', db, '--json');
    const id = String(parseJson<InstanceJson>(run).id);
    expect((await runCli('approve', id, 'approve', '--approve', '--db', db)).code).toBe(0);
    const again = await runCli('approve', id, 'approve', '--reject', '--db', db);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^error: INVALID_STATE: /);
    // Neither or both of --approve / --reject is bad usage.
    expect((await runCli('approve', id, 'approve', '--db', db)).code).toBe(2);
  });

  it('the real bin: `node bin/runnel.js run examples/purchase-approval.workflow.json` exits 3 and prints how to decide', () => {
    const r = spawnSync(
      process.execPath,
      ['bin/runnel.js', 'run', 'examples/purchase-approval.workflow.json', '--db', db],
      {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(r.status).toBe(3);
    expect(r.stdout).toContain('waiting for a person at "approve"');
    expect(r.stdout).toContain('runnel approve 1 approve --approve --db ');
    expect(r.stderr).toContain('approve  waits for a person');
    expect(fs.existsSync(db)).toBe(true);
  });
});
