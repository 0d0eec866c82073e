/**
 * The PostgreSQL server of the bench: `RUNNEL_BENCH_PG_URL` when set (a user that may create
 * databases), else a throwaway cluster started here with durable settings (fsync, synchronous
 * commit and full-page writes on: every commit waits for its WAL on the disk) when `initdb` is
 * installed, else none — and then the PostgreSQL section is skipped with the reason.
 *
 * Each measurement runs in a database of its own, created here and dropped when measured.
 */
import pg from 'pg';
import { DURABLE_PG_SETTINGS, pgInstalled, startPgCluster } from '../test/helpers/pg-cluster';

/** The server the PostgreSQL rows run on. */
export interface BenchPostgres {
  /** URL of a user that may create databases (its database part is replaced per measurement). */
  adminUrl: string;
  /** Whether the bench started this server (false: RUNNEL_BENCH_PG_URL). */
  owned: boolean;
  /** The server's version and its durability settings as it reports them (`SHOW`). */
  settings: Record<string, string>;
  /** Stops a server the bench started (nothing for a given URL). Safe to call twice. */
  stop(): Promise<void>;
}

/** Settings read back from the server and printed with the figures. */
const SHOWN = ['server_version', 'fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method', 'commit_delay', 'shared_buffers'];

/** `admin` with its database replaced by `database`. */
export function databaseUrl(admin: string, database: string): string {
  const url = new URL(admin);
  url.pathname = `/${database}`;
  return url.toString();
}

/** `url` without its password, for messages. */
export function redact(url: string): string {
  const u = new URL(url);
  if (u.password !== '') u.password = '***';
  return u.toString();
}

async function onClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * The bench's server, or why there is none (`{ skipped }`): RUNNEL_BENCH_PG_URL, else a cluster
 * of its own when initdb is installed (about 2 s to start; stopped at exit at the latest).
 */
export async function openBenchPostgres(): Promise<BenchPostgres | { skipped: string }> {
  const given = process.env.RUNNEL_BENCH_PG_URL;
  let adminUrl: string;
  let stop: () => Promise<void> = () => Promise.resolve();
  let owned = false;
  if (given !== undefined && given !== '') adminUrl = given;
  else if (!pgInstalled())
    return { skipped: 'no PostgreSQL: initdb is not installed (apt-get install -y postgresql) and RUNNEL_BENCH_PG_URL is unset' };
  else {
    let cluster: Awaited<ReturnType<typeof startPgCluster>>;
    try {
      cluster = await startPgCluster({ settings: DURABLE_PG_SETTINGS });
    } catch (err) {
      // The SQLite figures must not depend on it: the section says why and the bench goes on.
      return { skipped: `initdb is installed but no cluster started: ${(err as Error).message.split('\n')[0]}` };
    }
    const onExit = () => cluster.stopSync();
    process.once('exit', onExit);
    adminUrl = cluster.url;
    owned = true;
    stop = async () => {
      process.off('exit', onExit);
      await cluster.stop();
    };
  }
  try {
    const settings = await onClient(adminUrl, async (c) => {
      const out: Record<string, string> = {};
      for (const name of SHOWN) {
        const r = await c.query<Record<string, string>>(`SHOW ${name}`);
        out[name] = String(r.rows[0]?.[name]);
      }
      return out;
    });
    return { adminUrl, owned, settings, stop };
  } catch (err) {
    await stop();
    if (owned) throw err;
    return { skipped: `RUNNEL_BENCH_PG_URL (${redact(adminUrl)}) did not answer: ${(err as Error).message}` };
  }
}

/** Creates the empty database `name` (a fresh one: dropped first if left by an earlier run); returns its URL. */
export async function createDatabase(adminUrl: string, name: string): Promise<string> {
  await onClient(adminUrl, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${name}`);
  });
  return databaseUrl(adminUrl, name);
}

/** Drops the database `name`, ending any connection still on it. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await onClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}
