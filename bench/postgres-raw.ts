/**
 * The raw PostgreSQL baseline: the least work one workflow step can do on a PostgreSQL server,
 * the counterpart of bench/raw.ts (SQLite) on the same server settings as the engine's row.
 *
 * One transaction of `k` steps (k = 1: one commit per step; k = 32: group commit, the batch of
 * the engine's loop turn) is four round trips:
 *   1. `BEGIN`
 *   2. claim: `SELECT … WHERE status = 'PENDING' AND ready_at < $now ORDER BY ready_at LIMIT $k
 *      FOR UPDATE SKIP LOCKED` (rows another worker holds are skipped, not waited for)
 *   3. in JavaScript: parse, change and re-serialise each row's ~200 B of variables; then one
 *      statement writes every row back with a version check (`UPDATE … FROM unnest(…) WHERE
 *      i.version = v.version`) and appends one history row per step (`INSERT … SELECT` from the
 *      update's RETURNING); fewer rows back than claimed aborts the run
 *   4. `COMMIT`
 *
 * As a child process (one connection, one worker):
 * `node --import tsx bench/postgres-raw.ts '<{"url","durationMs"}>'` connects and prints
 * `BENCH_READY`; then, per line on stdin: `warm <k>` runs 50 transactions of `k` steps and
 * prints `BENCH_WARMED <k>`; `run <k>` runs its closed loop for `durationMs` and prints
 * `BENCH_RESULT <k> {json}` ({@link RawPgWorkerResult}); `exit` ends it.
 */
import fs from 'node:fs';
import pg from 'pg';
import { benchVariables } from './workflows';
import { Latency, nowMs } from './stats';
import { nowUs } from './raw';

// ids, steps and times are BIGINT: numbers here (all below 2^53).
pg.types.setTypeParser(pg.types.builtins.INT8, Number);

/** Creates the raw schema (the columns of bench/raw.ts's) in an empty database. */
export async function createRawSchema(client: pg.ClientBase): Promise<void> {
  await client.query(`
    CREATE TABLE instance (
      id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      status TEXT NOT NULL,
      ready_at BIGINT NOT NULL,
      step BIGINT NOT NULL DEFAULT 0,
      steps BIGINT NOT NULL,
      variables_json TEXT NOT NULL,
      version INTEGER NOT NULL DEFAULT 1,
      updated_at BIGINT NOT NULL
    );
    CREATE INDEX instance_ready ON instance (status, ready_at);
    CREATE TABLE history (
      id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      instance_id BIGINT NOT NULL,
      step BIGINT NOT NULL,
      type TEXT NOT NULL,
      at BIGINT NOT NULL,
      data_json TEXT
    );
  `);
}

/** Inserts `n` PENDING instances that never end (they cycle through the queue), due at once. */
export async function seedRaw(client: pg.ClientBase, n: number): Promise<void> {
  const vars = Array.from({ length: n }, (_, i) => JSON.stringify(benchVariables(i)));
  await client.query(
    `INSERT INTO instance (status, ready_at, steps, variables_json, updated_at)
     SELECT 'PENDING', 0, $1, v, $2 FROM unnest($3::text[]) AS v`,
    [Number.MAX_SAFE_INTEGER, Date.now(), vars],
  );
  await client.query('VACUUM ANALYZE instance');
}

const CLAIM = `SELECT id, step, steps, variables_json, version FROM instance
  WHERE status = 'PENDING' AND ready_at < $1 ORDER BY ready_at LIMIT $2 FOR UPDATE SKIP LOCKED`;

const SAVE = `WITH v AS (
    SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::text[], $5::bigint[])
      AS v(id, version, variables_json, status, step)
  ), u AS (
    UPDATE instance i SET variables_json = v.variables_json, status = v.status, step = v.step,
      ready_at = $6, updated_at = $7, version = i.version + 1
    FROM v WHERE i.id = v.id AND i.version = v.version
    RETURNING i.id, i.step
  )
  INSERT INTO history (instance_id, step, type, at) SELECT id, step, 'step.completed', $7 FROM u`;

interface Claimed {
  id: number;
  step: number;
  steps: number;
  variables_json: string;
  version: number;
}

/**
 * Runs up to `k` steps in one transaction (`now` in epoch µs: rows due strictly before it are
 * claimed, and put back due at it, so an instance's next step runs in a later transaction);
 * returns the steps committed.
 *
 * @throws Error when a version check fails (another worker changed a claimed row: a bug).
 */
export async function rawPgBatch(client: pg.ClientBase, k: number, now = nowUs()): Promise<number> {
  await client.query('BEGIN');
  try {
    const { rows } = await client.query<Claimed>({ name: 'raw-claim', text: CLAIM, values: [now, k] });
    if (rows.length === 0) {
      await client.query('COMMIT');
      return 0;
    }
    const nowMillis = Math.floor(now / 1000);
    const ids: number[] = [];
    const versions: number[] = [];
    const vars: string[] = [];
    const statuses: string[] = [];
    const steps: number[] = [];
    for (const row of rows) {
      const v = JSON.parse(row.variables_json) as Record<string, unknown>;
      const next = row.step + 1;
      v.step = next;
      v.lastStepAt = nowMillis;
      ids.push(row.id);
      versions.push(row.version);
      vars.push(JSON.stringify(v));
      statuses.push(next >= row.steps ? 'COMPLETED' : 'PENDING');
      steps.push(next);
    }
    const saved = await client.query({
      name: 'raw-save',
      text: SAVE,
      values: [ids, versions, vars, statuses, steps, now, nowMillis],
    });
    if (saved.rowCount !== rows.length)
      throw new Error(`raw pg: version check failed: ${saved.rowCount} of ${rows.length} rows written`);
    await client.query('COMMIT');
    return rows.length;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** What one raw worker process reports. */
export interface RawPgWorkerResult {
  k: number;
  steps: number;
  seconds: number;
  /** Transaction time (BEGIN → COMMIT answered), encoded histogram (stats.ts Latency). */
  txn: string;
  /** CPU of this process (user + system), µs per step: the client's share only. */
  cpuUsPerStep: number;
}

/** Closed loop of `k`-step transactions on one connection for `durationMs`. */
export async function rawPgClosedLoop(client: pg.ClientBase, k: number, durationMs: number): Promise<RawPgWorkerResult> {
  const txn = new Latency();
  const cpu0 = process.cpuUsage();
  const t0 = nowMs();
  let steps = 0;
  for (;;) {
    const s = nowMs();
    steps += await rawPgBatch(client, k);
    const e = nowMs();
    txn.record(e - s);
    if (e - t0 >= durationMs) break;
  }
  const seconds = (nowMs() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { k, steps, seconds, txn: txn.encode(), cpuUsPerStep: (cpu.user + cpu.system) / Math.max(1, steps) };
}

async function main(arg: string): Promise<void> {
  const { url, durationMs } = JSON.parse(arg) as { url: string; durationMs: number };
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  process.stdin.setEncoding('utf8').on('data', (d: string) => {
    lines.push(...d.split('\n').filter((l) => l !== ''));
    wake?.();
  });
  process.stdin.once('end', () => process.exit(1));
  process.stdout.write('BENCH_READY\n');
  for (;;) {
    while (lines.length === 0) await new Promise<void>((r) => (wake = r));
    const [command, kText] = (lines.shift() as string).split(' ');
    const k = Number(kText);
    if (command === 'warm') {
      // Warm-up: the prepared statements, the JIT, the server's caches.
      for (let i = 0; i < 50; i++) await rawPgBatch(client, k);
      process.stdout.write(`BENCH_WARMED ${k}\n`);
    } else if (command === 'run') {
      const result = await rawPgClosedLoop(client, k, durationMs);
      process.stdout.write(`BENCH_RESULT ${k} ${JSON.stringify(result)}\n`);
    } else break;
  }
  await client.end();
  process.stdin.destroy();
}

const arg = process.argv[2];
if (arg !== undefined && process.argv[1] !== undefined && fs.realpathSync(process.argv[1]) === fs.realpathSync(new URL(import.meta.url)))
  await main(arg);
