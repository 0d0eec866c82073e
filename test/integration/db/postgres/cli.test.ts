/**
 * The command line on a PostgreSQL database: `--db postgres://…` (or `RUNNEL_DB`) wherever a file
 * is accepted, the URL never probed as a path, and a database that is missing or cannot be
 * reached refused with its code and exit status, the password never printed.
 */
import { PG_SCHEMA_VERSION } from '../../../../engine/db/postgres/migrations/index';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseJson, runCli } from '../../../helpers/cli';
import { tempPostgres } from '../../../helpers/postgres';
import { tempDir } from '../../../helpers/temp-engine';

let db: Awaited<ReturnType<typeof tempPostgres>>;
let dir: ReturnType<typeof tempDir>;

beforeEach(async () => {
  db = await tempPostgres();
  dir = tempDir('runnel-pg-cli-');
});

afterEach(async () => {
  delete process.env.RUNNEL_DB;
  dir.cleanup();
  await db.drop();
});

describe('the CLI on PostgreSQL', () => {
  it('creates the schema with init, runs a workflow with --db URL, and reads it back through RUNNEL_DB', async () => {
    const init = await runCli('init', '--db', db.url, '--json');
    expect(init.code, init.stderr).toBe(0);
    expect(parseJson(init)).toMatchObject({ created: true, schemaVersion: PG_SCHEMA_VERSION });
    expect(parseJson(await runCli('init', '--db', db.url, '--json'))).toMatchObject({ created: false });

    const file = path.join(dir.dir, 'double.workflow.json');
    fs.writeFileSync(file, JSON.stringify({ name: 'pg-cli', nodes: [{ id: 'double', type: 'pass', config: { value: '{{ n * 2 }}' } }] }));
    const run = await runCli('run', file, '--db', db.url, '--vars', '{"n": 21}', '--json');
    expect(run.code, run.stderr).toBe(0);
    const { id } = parseJson<{ id: number }>(run);

    process.env.RUNNEL_DB = db.url;
    const show = await runCli('show', String(id), '--json');
    expect(show.code, show.stderr).toBe(0);
    expect(parseJson(show)).toMatchObject({ id, status: 'COMPLETED', workflow: 'pg-cli' });
  });

  it('does not write the schema into a database for a command that only reads (exit 2, NOT_FOUND)', async () => {
    const r = await runCli('list', '--db', db.url);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('has no Runnel schema');
    // and init then creates it
    expect((await runCli('init', '--db', db.url)).code).toBe(0);
    expect((await runCli('list', '--db', db.url)).code).toBe(0);
  });

  it('refuses a missing database (exit 2, NOT_FOUND) and an unreachable server (exit 1, DATABASE_UNAVAILABLE) without printing the password', async () => {
    const missing = new URL(db.url);
    missing.pathname = '/runnel_cli_missing';
    missing.password = 'pw-not-to-print';
    const a = await runCli('list', '--db', missing.toString());
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/NOT_FOUND: database "runnel_cli_missing" does not exist/);
    expect(a.stderr + a.stdout).not.toContain('pw-not-to-print');
    const b = await runCli('list', '--db', 'postgres://runnel:pw-not-to-print@127.0.0.1:1/runnel');
    expect(b.code).toBe(1);
    expect(b.stderr).toContain('DATABASE_UNAVAILABLE');
    expect(b.stderr + b.stdout).not.toContain('pw-not-to-print');
  });
});
