/**
 * Where the engine's time goes: `node --import tsx bench/profile.ts [sync] [instances]`
 * (add `--cpu-prof` before `--import` for a V8 profile).
 *
 * Runs the 3-node linear workflow like the benchmark, with every SQL statement timed (calls,
 * total µs, µs per transition), prints the top statements, the plans of the claim and commit
 * statements (EXPLAIN QUERY PLAN), WAL checkpoint timings, and bytes per table (dbstat).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteEngine } from '../engine/api/index';
import { engineOpenLoop, engineThroughput } from './engine-run';
import { openRaw, rawClosedLoop, rawOpenLoop, rawPattern, seedMany, type Sync } from './raw';
import { benchRegistry, LINEAR, LINEAR4 } from './workflows';
import { nowMs, removeDb } from './stats';

const sync = (process.argv[2] ?? 'FULL') as Sync;
const n = Number(process.argv[3] ?? 5000);

/** Per-SQL timing, collected by wrapping every statement better-sqlite3 prepares. */
const timings = new Map<string, { calls: number; us: number }>();
const proto = Database.prototype as unknown as { prepare: (sql: string) => Database.Statement };
const prepare = proto.prepare;
proto.prepare = function (this: Database.Database, sql: string) {
  const stmt = prepare.call(this, sql);
  const key = sql.replace(/\s+/g, ' ').trim();
  for (const m of ['run', 'get', 'all'] as const) {
    const orig = stmt[m].bind(stmt) as (...a: unknown[]) => unknown;
    (stmt as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => {
      const s = nowMs();
      try {
        return orig(...args);
      } finally {
        const t = timings.get(key) ?? { calls: 0, us: 0 };
        t.calls++;
        t.us += (nowMs() - s) * 1000;
        timings.set(key, t);
      }
    };
  }
  return stmt;
};

const dir = path.join('bench', 'results');
fs.mkdirSync(dir, { recursive: true });
const file = path.join(dir, `profile-${process.pid}.db`);
removeDb(file);
const engine = SqliteEngine.open(file, { synchronous: sync, registry: benchRegistry() });
// Time checkpoints: the WAL autocheckpoint runs inside a commit, so time every write that shrank
// nothing but took long; wal_checkpoint itself is timed below on the same file.
const r = await engineThroughput(engine, sync, LINEAR, n);
timings.clear();
const r2 = await engineThroughput(engine, sync, LINEAR, n);
const total = [...timings.values()].reduce((s, t) => s + t.us, 0);
console.log(
  `${sync}: ${n} × linear: ${Math.round(r.transitionsPerSec)} then ${Math.round(r2.transitionsPerSec)} transitions/s, ${r2.cpuUsPerTransition.toFixed(1)} µs CPU per transition`,
);
console.log(
  `SQL statements: ${(total / r2.transitions).toFixed(1)} µs per transition (${((total / (r2.cpuUsPerTransition * r2.transitions)) * 100).toFixed(0)}% of CPU)`,
);
const rows = [...timings.entries()].sort((a, b) => b[1].us - a[1].us).slice(0, 25);
for (const [sql, t] of rows) {
  console.log(
    `${(t.us / r2.transitions).toFixed(2).padStart(7)} µs/tr ${(t.calls / r2.transitions).toFixed(2).padStart(5)} calls/tr ${(t.us / t.calls).toFixed(1).padStart(7)} µs/call  ${sql.slice(0, 150)}`,
  );
}

const raw = engine.db.raw;
const plan = (sql: string, ...params: unknown[]) => {
  console.log(`\nEXPLAIN QUERY PLAN ${sql.replace(/\s+/g, ' ').slice(0, 140)}`);
  for (const p of raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
    console.log(`  ${p.detail}`);
};
plan(
  `SELECT id, instance_id, node_id, kind, next_run_at, retry_count, lease_owner, version FROM schedule WHERE next_run_at <= ? ORDER BY next_run_at LIMIT ?`,
  Date.now(),
  32,
);
plan(
  `UPDATE schedule SET lease_owner = ?, next_run_at = ?, lease_expires_at = ?, version = version + 1 WHERE id = ? AND version = ?`,
  'x',
  1,
  1,
  1,
  1,
);
plan(`DELETE FROM schedule WHERE id = ? AND lease_owner = ? AND version = ?`, 1, 'x', 1);
plan(
  `SELECT id, workflow_id, status, variables_json, version, suspension_json, end_status, started_at FROM instance WHERE id = ?`,
  1,
);
plan(
  `UPDATE node_state SET status = 'COMPLETED', output_json = ?, ended_at = ?,
          completed_seq = (SELECT coalesce(max(completed_seq), 0) + 1 FROM node_state WHERE instance_id = ?)
    WHERE instance_id = ? AND node_id = ?`,
  'null',
  1,
  1,
  1,
  'a',
);
plan(
  `SELECT count(*) FILTER (WHERE status IN ('PENDING', 'READY', 'RUNNING', 'WAITING', 'RETRYING')) AS open,
          count(*) FILTER (WHERE status IN ('READY', 'RUNNING')) AS active FROM node_state WHERE instance_id = ?`,
  1,
);
plan(
  `UPDATE node_state SET pending_in = pending_in - 1, taken_in = taken_in + ?, version = version + 1 WHERE instance_id = ? AND node_id = ? RETURNING pending_in, taken_in, status`,
  1,
  1,
  'b',
);
plan(`DELETE FROM schedule WHERE instance_id = ?`, 1);
plan(`SELECT min(next_run_at) AS at FROM schedule`);

// WAL volume and checkpoint cost: with automatic checkpoints off, how many WAL bytes one
// transition appends, and how long a PASSIVE checkpoint of that WAL then takes — for the engine
// and the raw pattern, in a closed loop (full group commits) and an open loop (1,000 instances/s).
await engine.close();
removeDb(file);
const walFile = `${file}-wal`;
const walCase = async (
  what: string,
  run: () => Promise<{ steps: number; db: Database.Database; close: () => Promise<void> }>,
) => {
  const { steps, db, close } = await run();
  const bytes = fs.statSync(walFile).size;
  const s = nowMs();
  const cp = db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
  const ms = nowMs() - s;
  console.log(
    `  ${what.padEnd(36)} ${(bytes / steps / 1024).toFixed(1).padStart(6)} KiB/step  (${(bytes / 2 ** 20).toFixed(1)} MiB, ${cp[0]?.log ?? 0} frames; checkpoint ${ms.toFixed(1)} ms)`,
  );
  await close();
  removeDb(file);
};
console.log('\nWAL appended per step, automatic checkpoints off:');
for (const mode of ['closed', 'open'] as const) {
  await walCase(
    `engine, ${mode === 'closed' ? 'closed loop (3,000 × linear)' : 'open loop, 1,000 inst/s, 2 s'}`,
    async () => {
      const e = SqliteEngine.open(file, { synchronous: sync, registry: benchRegistry(), walAutocheckpoint: 0 });
      const r =
        mode === 'closed'
          ? await engineThroughput(e, sync, LINEAR, 3000)
          : await engineOpenLoop(e, sync, 0, 1000, 2000);
      const steps = 'transitions' in r ? r.transitions : Math.round(r.transitionsPerSec * 2);
      return { steps, db: e.db.raw, close: () => e.close() };
    },
  );
  await walCase(
    `raw, ${mode === 'closed' ? 'closed loop (32 steps/txn, 1,000 live)' : 'open loop, 1,000 inst/s, 2 s'}`,
    async () => {
      const db = openRaw(file, sync);
      db.pragma('wal_autocheckpoint = 0');
      const raw = rawPattern(db);
      let steps: number;
      if (mode === 'closed') {
        seedMany(raw, 1000, Number.MAX_SAFE_INTEGER, 'PENDING', 0);
        db.pragma('wal_checkpoint(TRUNCATE)');
        steps = (await rawClosedLoop(raw, sync, 32, 1000, 500)).steps;
      } else {
        steps = (await rawOpenLoop(raw, sync, 32, 0, 1000, 2000)).completed * 3;
      }
      return {
        steps,
        db,
        close: () => {
          db.close();
          return Promise.resolve();
        },
      };
    },
  );
}

// Bytes per table (dbstat) for a 4-node footprint run.
const fpFile = path.join(dir, `profile-fp-${process.pid}.db`);
removeDb(fpFile);
const fpEngine = SqliteEngine.open(fpFile, { synchronous: 'NORMAL', registry: benchRegistry() });
const { engineFootprint } = await import('./engine-run');
const fp = await engineFootprint(fpEngine, LINEAR4, 2000);
console.log(
  `\nfootprint: ${Math.round(fp.bytesPerInstance)} B per completed 4-node instance; by table and index (dbstat):`,
);
try {
  for (const t of fpEngine.db.raw
    .prepare(
      `SELECT name, sum(pgsize) AS bytes, sum(payload) AS payload, sum(unused) AS unused FROM dbstat GROUP BY name ORDER BY bytes DESC`,
    )
    .all() as { name: string; bytes: number; payload: number; unused: number }[]) {
    console.log(
      `  ${t.name.padEnd(24)} ${(t.bytes / fp.instances).toFixed(0).padStart(6)} B/inst (payload ${(t.payload / fp.instances).toFixed(0)}, unused ${(t.unused / fp.instances).toFixed(0)})`,
    );
  }
} catch (err) {
  console.log(`  (dbstat unavailable: ${(err as Error).message})`);
}
await fpEngine.close();
removeDb(fpFile);
