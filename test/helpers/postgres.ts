/**
 * Test helpers: a fresh PostgreSQL database per test on the run's cluster (started by
 * test/helpers/pg-global-setup.ts, or the server `RUNNEL_TEST_PG_URL` names). Nothing is mocked:
 * each database is real, created empty and dropped when the test is done with it.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { pgBinDir } from './pg-cluster';

/**
 * The URL of the run's PostgreSQL server, as a user that may create databases.
 *
 * @throws Error when the run has none (the project has no pg globalSetup and RUNNEL_TEST_PG_URL is unset).
 */
export function pgAdminUrl(): string {
  let url: string | undefined;
  try {
    url = inject('pgUrl');
  } catch {
    // Not inside a vitest worker.
  }
  url = url || process.env.RUNNEL_TEST_PG_URL;
  if (!url) {
    throw new Error('no PostgreSQL for this test: run it in a project with test/helpers/pg-global-setup.ts (vitest.config.ts), or set RUNNEL_TEST_PG_URL');
  }
  return url;
}

/** `admin` with its database replaced by `database`. */
export function databaseUrl(admin: string, database: string): string {
  const url = new URL(admin);
  url.pathname = `/${database}`;
  return url.toString();
}

async function onAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: pgAdminUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * How databases are created: FILE_COPY copies the (tiny) template's files, about 4× faster than
 * PostgreSQL 15's default WAL_LOG here (30 vs 120 ms). Needs PostgreSQL 15 or later.
 */
const FAST = 'STRATEGY FILE_COPY';

/** Options of {@link tempPostgres}. */
export interface TempPostgresOptions {
  /**
   * An ICU locale for the database's default collation (e.g. `en-US`), so that text compares as
   * most production databases do (case and accents interleaved) instead of the test cluster's
   * bytewise C locale: a query that relies on bytewise order without saying `COLLATE "C"` fails.
   */
  icuLocale?: string;
}

/**
 * A new empty database `runnel_t_<random>` on the run's server. `url` connects to it; `drop()`
 * removes it, ending any connection still open on it (call it in afterEach, after closing what
 * used it). Dropping twice is harmless.
 */
export async function tempPostgres(options: TempPostgresOptions = {}): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `runnel_t_${randomBytes(6).toString('hex')}`;
  const icu = options.icuLocale === undefined ? '' : ` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '${options.icuLocale.replace(/'/g, "''")}' ENCODING 'UTF8'`;
  await onAdmin((c) => c.query(`CREATE DATABASE ${name}${icu} ${FAST}`));
  let dropped = false;
  return {
    url: databaseUrl(pgAdminUrl(), name),
    name,
    async drop() {
      if (dropped) return;
      dropped = true;
      await onAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** psql, when installed (Debian's PostgreSQL or its client package); else undefined. */
function psqlPath(): string | undefined {
  const bin = pgBinDir();
  const candidates = [...(bin === '' ? [] : [path.join(bin, 'psql')]), '/usr/bin/psql', '/usr/local/bin/psql'];
  return candidates.find((p) => fs.existsSync(p));
}

/** Runs one statement on the admin database, synchronously: psql when installed (~20 ms), else a Node child with `pg`. */
function adminSync(sql: string): void {
  const admin = pgAdminUrl();
  const psql = psqlPath();
  if (psql !== undefined) {
    execFileSync(psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', admin, '-c', sql], { stdio: ['ignore', 'ignore', 'pipe'] });
    return;
  }
  const script = `const pg = require('pg'); const c = new pg.Client({ connectionString: process.argv[1] });
    c.connect().then(() => c.query(process.argv[2])).then(() => c.end(), (e) => { console.error(e.message); process.exit(1); });`;
  execFileSync(process.execPath, ['-e', script, admin, sql], { stdio: ['ignore', 'ignore', 'pipe'], cwd: path.dirname(new URL(import.meta.url).pathname) });
}

/**
 * {@link tempPostgres}, created synchronously (for test/helpers/temp-engine.ts, whose
 * `tempEngine()` is synchronous); `drop()` is async as there.
 */
export function tempPostgresSync(): { url: string; name: string; drop(): Promise<void> } {
  const name = `runnel_t_${randomBytes(6).toString('hex')}`;
  adminSync(`CREATE DATABASE ${name} ${FAST}`);
  let dropped = false;
  return {
    url: databaseUrl(pgAdminUrl(), name),
    name,
    async drop() {
      if (dropped) return;
      dropped = true;
      await onAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
