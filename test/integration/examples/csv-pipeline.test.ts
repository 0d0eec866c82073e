import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCsv } from '../../../examples/pipeline-nodes';
import { REPO_ROOT, example, parseJson, runCli } from '../../helpers/cli';
import { tempDir } from '../../helpers/temp-engine';

interface InstanceJson {
  id: number;
  status: string;
  variables: {
    cleaned?: { kept: number; rejected: Record<string, number> };
    loaded?: { rows: number; total: number; table: string };
  };
  nodes: Array<{ id: string; status: string; attempt: number; output?: unknown }>;
}

interface HistoryEvent {
  nodeId: string | null;
  type: string;
  attempt: number | null;
  data?: { willRetry?: boolean; error?: { code: string } };
}

const PIPELINE = example('csv-pipeline.workflow.json');
const PLUGIN = example('pipeline-nodes.ts');
/** Rows of examples/data/orders.csv that survive `clean` (3,600 rows, 50 dirty on purpose). */
const EXPECTED_ROWS = 3550;

describe('example csv-pipeline: extract → clean → load with custom node types', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  let out: string;
  beforeEach(() => {
    tmp = tempDir();
    db = path.join(tmp.dir, 'runnel.db');
    out = path.join(tmp.dir, 'orders.db');
  });
  afterEach(() => tmp.cleanup());

  it('ships a real CSV with thousands of rows', () => {
    const csv = fs.readFileSync(example('data/orders.csv'), 'utf8');
    const table = parseCsv(csv);
    expect(table.columns).toEqual([
      'order_id',
      'order_date',
      'customer',
      'email',
      'country',
      'sku',
      'product',
      'quantity',
      'unit_price',
    ]);
    expect(table.rows).toHaveLength(3600);
    expect(Buffer.byteLength(csv)).toBeLessThan(400 * 1024);
  });

  it('loads the cleaned rows (COMPLETED, exit 0) and the load shows a failed attempt 1 then attempt 2', async () => {
    // When the pipeline runs with its plug-in
    const r = await runCli(
      'run',
      PIPELINE,
      '--plugin',
      PLUGIN,
      '--db',
      db,
      '--json',
      '--vars',
      JSON.stringify({ outputFile: out }),
    );
    // Then it completes with the expected row counts
    expect(r.code, r.stderr).toBe(0);
    const inst = parseJson<InstanceJson>(r);
    expect(inst.status).toBe('COMPLETED');
    expect(inst.variables.cleaned?.kept).toBe(EXPECTED_ROWS);
    expect(inst.variables.cleaned?.rejected).toEqual({
      bad_email: 23,
      bad_quantity: 12,
      bad_price: 5,
      bad_country: 0,
      duplicate: 10,
    });
    expect(inst.variables.loaded).toMatchObject({
      rows: EXPECTED_ROWS,
      total: EXPECTED_ROWS,
      table: 'orders',
    });
    expect(inst.nodes.find((n) => n.id === 'extract')?.output).toMatchObject({ count: 3600 });
    expect(inst.nodes.find((n) => n.id === 'load')).toMatchObject({ status: 'COMPLETED', attempt: 2 });

    // And the output file holds the cleaned rows, normalized
    const o = new Database(out, { readonly: true });
    try {
      expect((o.prepare('SELECT count(*) AS n FROM orders').get() as { n: number }).n).toBe(EXPECTED_ROWS);
      const bad = o
        .prepare(
          `SELECT count(*) AS n FROM orders WHERE country NOT GLOB '[A-Z][A-Z]' OR quantity <= 0 OR unit_price <= 0 OR email NOT LIKE '%@%'`,
        )
        .get() as { n: number };
      expect(bad.n).toBe(0);
    } finally {
      o.close();
    }

    // And history shows the retried step: attempt 1 failed (will retry), attempt 2 completed
    const shown = parseJson<{ history: HistoryEvent[] }>(
      await runCli('show', String(inst.id), '--history', '--json', '--db', db, '--plugin', PLUGIN),
    );
    const load = shown.history.filter((h) => h.nodeId === 'load');
    expect(
      load
        .filter((h) => h.type === 'node.failed')
        .map((h) => [h.attempt, h.data?.willRetry, h.data?.error?.code]),
    ).toEqual([[1, true, 'DATABASE_BUSY']]);
    expect(load.filter((h) => h.type === 'node.completed').map((h) => h.attempt)).toEqual([2]);
  });

  it('runs again on the same output file without duplicating rows (the load upserts)', async () => {
    const vars = JSON.stringify({ outputFile: out });
    expect((await runCli('run', PIPELINE, '--plugin', PLUGIN, '--db', db, '--vars', vars)).code).toBe(0);
    const again = await runCli('run', PIPELINE, '--plugin', PLUGIN, '--db', db, '--json', '--vars', vars);
    expect(again.code).toBe(0);
    expect(parseJson<InstanceJson>(again).variables.loaded).toMatchObject({
      rows: EXPECTED_ROWS,
      total: EXPECTED_ROWS,
    });
  });

  it('without the plug-in the workflow is invalid (unknown types named), exit 2', async () => {
    const r = await runCli('validate', PIPELINE);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('UNKNOWN_TYPE node "extract": type "csv.read"');
    expect(r.stderr).toContain('UNKNOWN_TYPE node "load": type "sqlite.load"');
    expect((await runCli('validate', PIPELINE, '--plugin', PLUGIN)).code).toBe(0);
  });
});

describe('the README\'s command for the CSV pipeline', () => {
  it('works as written (in a shell, from the repository root; only --db added, to keep ./runnel.db out of it)', () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const command = /`(npx runnel run examples\/csv-pipeline\.workflow\.json [^`]*)`/.exec(readme)?.[1];
    expect(command).toBeDefined();
    const { dir, cleanup } = tempDir();
    try {
      const r = spawnSync('sh', ['-c', `${command ?? 'false'} --db ${path.join(dir, 'runnel.db')} --json`], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
      expect(r.status, `${String(r.error)} ${String(r.signal)} ${r.stderr}`).toBe(0);
      expect((JSON.parse(r.stdout) as { status: string }).status).toBe('COMPLETED');
    } finally {
      cleanup();
    }
  });
});
