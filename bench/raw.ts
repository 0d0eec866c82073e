/**
 * The raw baseline: the least work one workflow step can do on SQLite, on the engine's file
 * settings (anchors-performance.md, section 3).
 *
 * One step = claim the oldest due PENDING row with one index seek (`UPDATE … WHERE id = (SELECT …
 * ORDER BY ready_at LIMIT 1) RETURNING`), parse, change and re-serialise its ~200 B of variables,
 * write it back with a version check, append one history row. `K` steps share one BEGIN IMMEDIATE
 * transaction (K = 1: one commit per step; K = 32: the engine's group-commit batch).
 */
import Database from 'better-sqlite3';
import { benchVariables } from './workflows';
import { footprint, Latency, nowMs, sleep, type LatencySummary } from './stats';

/** SQLite durability level under test. */
export type Sync = 'FULL' | 'NORMAL';

/** Opens `file` with the engine's pragmas (engine/db/open-database.ts) and the raw schema. */
export function openRaw(file: string, sync: Sync): Database.Database {
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sync}`);
  db.pragma('foreign_keys = ON');
  db.pragma('wal_autocheckpoint = 1000');
  db.pragma('temp_store = MEMORY');
  db.exec(`
    CREATE TABLE IF NOT EXISTS instance (
      id INTEGER PRIMARY KEY,
      status TEXT NOT NULL,
      ready_at INTEGER NOT NULL,
      step INTEGER NOT NULL DEFAULT 0,
      steps INTEGER NOT NULL,
      variables_json TEXT NOT NULL,
      version INTEGER NOT NULL DEFAULT 1,
      updated_at INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX IF NOT EXISTS instance_ready ON instance (status, ready_at);
    CREATE TABLE IF NOT EXISTS history (
      id INTEGER PRIMARY KEY,
      instance_id INTEGER NOT NULL,
      step INTEGER NOT NULL,
      type TEXT NOT NULL,
      at INTEGER NOT NULL,
      data_json TEXT
    ) STRICT;
  `);
  return db;
}

/** A committed step: which instance, which step (1-based), and whether the instance ended. */
interface StepDone {
  id: number;
  step: number;
  done: boolean;
}

/**
 * Now in epoch microseconds: the raw pattern's `ready_at` clock. A step puts its row back due at
 * the batch's `now` and a claim takes rows due strictly before it, so the next step of an
 * instance runs in a later transaction, after its predecessor's commit — as in the engine, where
 * a node becomes due when the transition before it commits.
 */
export const nowUs = (): number => Math.floor((performance.timeOrigin + performance.now()) * 1000);

/** The raw pattern over one open file. */
export interface RawPattern {
  /** Runs up to `k` steps in one BEGIN IMMEDIATE transaction (`now` in epoch µs); returns them. */
  runBatch(k: number, now?: number): StepDone[];
  /** Inserts `n` instances of `steps` steps in one transaction; returns their ids. */
  seed(
    n: number,
    steps: number,
    status: 'PENDING' | 'WAITING',
    readyAt: number,
    firstIndex: number,
  ): number[];
  /** Parks every PENDING instance (WAITING, due never): live, but idle. */
  park(): void;
}

/** The prepared raw pattern on one connection. */
export function rawPattern(db: Database.Database): RawPattern {
  const claim = db.prepare<
    [number],
    { id: number; step: number; steps: number; variables_json: string; version: number }
  >(
    `UPDATE instance SET status = 'RUNNING', version = version + 1
      WHERE id = (SELECT id FROM instance WHERE status = 'PENDING' AND ready_at < ? ORDER BY ready_at LIMIT 1)
      RETURNING id, step, steps, variables_json, version`,
  );
  const save = db.prepare<[string, string, number, number, number, number, number]>(
    `UPDATE instance SET variables_json = ?, status = ?, step = ?, ready_at = ?, updated_at = ?, version = version + 1
      WHERE id = ? AND version = ?`,
  );
  const history = db.prepare<[number, number, number]>(
    `INSERT INTO history (instance_id, step, type, at) VALUES (?, ?, 'step.completed', ?)`,
  );
  const insert = db.prepare<[string, number, number, string, number]>(
    `INSERT INTO instance (status, ready_at, steps, variables_json, updated_at) VALUES (?, ?, ?, ?, ?)`,
  );

  /** One step; undefined when nothing is due. */
  function step(now: number): StepDone | undefined {
    const row = claim.get(now);
    if (!row) return undefined;
    const vars = JSON.parse(row.variables_json) as Record<string, unknown>;
    const next = row.step + 1;
    vars.step = next;
    vars.lastStepAt = Math.floor(now / 1000);
    const done = next >= row.steps;
    const nowMillis = Math.floor(now / 1000);
    if (
      save.run(
        JSON.stringify(vars),
        done ? 'COMPLETED' : 'PENDING',
        next,
        now,
        nowMillis,
        row.id,
        row.version,
      ).changes !== 1
    ) {
      throw new Error(`raw: version check failed on instance ${row.id}`);
    }
    history.run(row.id, next, nowMillis);
    return { id: row.id, step: next, done };
  }

  /** Up to `k` steps in one BEGIN IMMEDIATE transaction. */
  const batch = db.transaction((k: number, now: number, out: StepDone[]) => {
    for (let i = 0; i < k; i++) {
      const s = step(now);
      if (!s) break;
      out.push(s);
    }
  });

  /** Inserts `n` instances of `steps` steps (status PENDING, or WAITING to keep them live but idle). */
  const seed = db.transaction(
    (n: number, steps: number, status: 'PENDING' | 'WAITING', readyAt: number, firstIndex: number) => {
      const ids: number[] = [];
      for (let i = 0; i < n; i++)
        ids.push(
          Number(
            insert.run(status, readyAt, steps, JSON.stringify(benchVariables(firstIndex + i)), Date.now())
              .lastInsertRowid,
          ),
        );
      return ids;
    },
  );

  const park = db.prepare(`UPDATE instance SET status = 'WAITING', ready_at = ? WHERE status = 'PENDING'`);

  return {
    runBatch(k, now = nowUs()) {
      const out: StepDone[] = [];
      batch.immediate(k, now, out);
      return out;
    },
    seed: (n, steps, status, readyAt, firstIndex) => seed.immediate(n, steps, status, readyAt, firstIndex),
    park() {
      park.run(Number.MAX_SAFE_INTEGER);
    },
  };
}

/** Result of {@link rawClosedLoop}. */
export interface RawThroughput {
  sync: Sync;
  k: number;
  /** Live instances in the file (cycling plus parked). */
  population: number;
  steps: number;
  seconds: number;
  stepsPerSec: number;
  /** Transaction time (begin → commit), per transaction. */
  txn: LatencySummary;
  cpuUsPerStep: number;
}

/**
 * Closed loop over the PENDING rows already in the file (each step puts its row back at the end
 * of the queue; they never end): `k` steps per transaction for `durationMs`.
 */
export async function rawClosedLoop(
  raw: RawPattern,
  sync: Sync,
  k: number,
  population: number,
  durationMs: number,
): Promise<RawThroughput> {
  // Warm-up: caches and the first WAL pages.
  for (let i = 0; i < 50; i++) raw.runBatch(k);
  const txn = new Latency();
  const cpu0 = process.cpuUsage();
  const t0 = nowMs();
  let steps = 0;
  let lastYield = t0;
  for (;;) {
    const s = nowMs();
    steps += raw.runBatch(k).length;
    const e = nowMs();
    txn.record(e - s);
    if (e - t0 >= durationMs) break;
    if (e - lastYield > 100) {
      await new Promise((r) => setImmediate(r));
      lastYield = nowMs();
    }
  }
  const seconds = (nowMs() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    sync,
    k,
    population,
    steps,
    seconds,
    stepsPerSec: steps / seconds,
    txn: txn.summary(),
    cpuUsPerStep: (cpu.user + cpu.system) / steps,
  };
}

/** Seeds `n` instances in transactions of 10,000. */
export function seedMany(
  raw: RawPattern,
  n: number,
  steps: number,
  status: 'PENDING' | 'WAITING',
  readyAt: number,
  firstIndex = 0,
): void {
  for (let done = 0; done < n; done += 10_000)
    raw.seed(Math.min(10_000, n - done), steps, status, readyAt, firstIndex + done);
}

/** Result of {@link rawOpenLoop}. */
export interface RawOpenLoop {
  sync: Sync;
  population: number;
  ratePerSec: number;
  arrived: number;
  completed: number;
  stepsPerSec: number;
  /** From the last arrival's due time to the last commit, ms: seconds mean it did not keep up. */
  drainMs: number;
  dueToCommitted: LatencySummary;
  service: LatencySummary;
}

/**
 * Open loop on top of the file's parked population: new 3-step instances arrive at `ratePerSec`
 * for `durationMs` (a 1 ms timer inserts the arrivals due since its last run in one
 * transaction, like the engine's `startMany`); the worker runs up to `k` due steps per
 * transaction. Due→committed: step 1 from its intended arrival time, step n from the commit of
 * step n−1; service: transaction start → commit.
 */
export async function rawOpenLoop(
  raw: RawPattern,
  sync: Sync,
  k: number,
  population: number,
  ratePerSec: number,
  durationMs: number,
): Promise<RawOpenLoop> {
  const due = new Map<number, number>();
  const dueToCommitted = new Latency();
  const service = new Latency();
  let wake: (() => void) | undefined;
  let arrived = 0;
  let completed = 0;
  let steps = 0;
  let lastCommit = 0;
  const total = Math.floor((durationMs / 1000) * ratePerSec);
  const t0 = nowMs();
  const generator = (async () => {
    while (arrived < total) {
      const target = Math.min(total, Math.floor(((nowMs() - t0) / 1000) * ratePerSec));
      const n = target - arrived;
      if (n > 0) {
        const ids = raw.seed(n, 3, 'PENDING', nowUs(), 2_000_000 + arrived);
        ids.forEach((id, i) => due.set(id, t0 + ((arrived + i + 1) / ratePerSec) * 1000));
        arrived = target;
        wake?.();
      }
      await sleep(1);
    }
  })();
  while (arrived < total || due.size > 0) {
    const s = nowMs();
    const done = raw.runBatch(k);
    const e = nowMs();
    for (const d of done) {
      steps++;
      lastCommit = e;
      service.record(e - s);
      const at = due.get(d.id);
      if (at === undefined) continue;
      dueToCommitted.record(e - at);
      if (d.done) {
        due.delete(d.id);
        completed++;
      } else due.set(d.id, e);
    }
    if (e - t0 > durationMs + 60_000)
      throw new Error('bench: raw open-loop arrivals did not finish within 60 s');
    if (done.length > 0) await new Promise((r) => setImmediate(r));
    else {
      await new Promise<void>((r) => {
        const t = setTimeout(() => {
          wake = undefined;
          r();
        }, 1);
        wake = () => {
          clearTimeout(t);
          wake = undefined;
          r();
        };
      });
    }
  }
  await generator;
  const seconds = (lastCommit - t0) / 1000;
  return {
    sync,
    population,
    ratePerSec,
    arrived,
    completed,
    stepsPerSec: steps / seconds,
    drainMs: lastCommit - (t0 + (total / ratePerSec) * 1000),
    dueToCommitted: dueToCommitted.summary(),
    service: service.summary(),
  };
}

/** Result of {@link rawFootprint}. */
export interface RawFootprint {
  instances: number;
  stepsPerInstance: number;
  fileBytes: number;
  bytesPerInstance: number;
  usedBytesPerInstance: number;
}

/** `n` instances of 4 steps run to COMPLETED (K = 32); file bytes per completed instance. */
export function rawFootprint(db: Database.Database, raw: RawPattern, n: number): RawFootprint {
  seedMany(raw, n, 4, 'PENDING', 0);
  while (raw.runBatch(32).length > 0);
  const left = db.prepare(`SELECT count(*) AS n FROM instance WHERE status <> 'COMPLETED'`).get() as {
    n: number;
  };
  if (left.n !== 0) throw new Error(`raw footprint: ${left.n} instances did not complete`);
  const fp = footprint(db);
  return {
    instances: n,
    stepsPerInstance: 4,
    fileBytes: fp.fileBytes,
    bytesPerInstance: fp.fileBytes / n,
    usedBytesPerInstance: fp.usedBytes / n,
  };
}
