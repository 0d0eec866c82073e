/**
 * The PostgreSQL implementation of the storage port ({@link StorageBackend}): one database on a
 * server that many processes and machines reach (`postgres://…` URLs).
 *
 * Writes: `write(fn)` runs `fn` synchronously over the sync bridge (./bridge.ts): BEGIN, the
 * transition's statements, COMMIT, on the bridge thread's one connection — the same state machine
 * as on SQLite. Concurrency control (pg-plan, "Concurrency control"): READ COMMITTED plus advisory
 * locks per instance, taken lazily by the query families (./queries/context.ts), claims with
 * `FOR UPDATE SKIP LOCKED` and try-locks (./queries/schedule.ts), locks on workflow names. A
 * transaction that fails with 40001 (serialization), 40P01 (deadlock), 23505 (a unique key taken
 * by a race) or 55P03 (lock timeout) is rolled back and `fn` runs again (up to
 * {@link PostgresStorageOptions.txRetries} times, full-jitter backoff between), as the port allows.
 * A transaction that changed anything ends with `pg_notify('runnel_changes', <this backend's id>)`
 * sent with its COMMIT (one round trip): other backends' `watchChanges` wake on it.
 *
 * Round trips: statements whose answer nobody reads (void writes, lock requests, the BEGIN) are
 * queued and sent with the next statement that answers, or with the COMMIT — one hop between the
 * threads instead of one each (SyncBridge.queue). A deferred statement's error therefore surfaces
 * at a later statement; when it escapes the transition that way (not contained by a savepoint,
 * which sends its queue before it ends), the write runs again with every statement sent in place,
 * so the error is thrown where SQLite would throw it.
 *
 * A bridge whose thread died is replaced by a new one at the next write (the write that met the
 * death failed with DATABASE_UNAVAILABLE; lease renewal moves to the new thread).
 *
 * Reads: the read model (./read-model.ts) over a `pg.Pool` on the engine's thread (async; no
 * bridge). Leases: renewed on the bridge's thread over a connection of its own (./bridge-thread.ts).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { EngineError } from '../../errors';
import type { LeaseKeeper, ReadModel, StorageBackend, WriteQueries } from '../../store/port';
import { clientConfig } from './connection';
import { openBridge, PgQueryError, type BridgeOptions, type QueryResult, type SyncBridge } from './bridge';
import { isRetryableTx, isStorageFailure, postgresError, redactUrl } from './errors';
import { migratePostgres, PG_SCHEMA_VERSION } from './migrations/index';
import { createHistoryQueries, createInstanceQueries } from './queries/instances';
import { createChildQueries, createEventQueries } from './queries/children';
import { createNodeQueries } from './queries/nodes';
import { createPostgresStateReads, createStateQueries } from './history-state';
import { trackStates } from '../../store/history-state';
import { CHECK_STATE_RECORD, STATE_EFFECTS } from '../../store/state-effects';
import { createRetentionQueries } from './queries/retention';
import { createScheduleQueries } from './queries/schedule';
import { createWorkflowQueries } from './queries/workflows';
import { instanceLockKeys, WORKFLOW_LOCK_SPACE, type PgTx } from './queries/context';
import { createPostgresReadModel } from './read-model';
import { createPostgresChangeReads, WRITE_BEGIN_SQL } from './changes';
import { createConsumerQueries } from './queries/changes';
import { createPostgresScheduleReads, createWorkflowScheduleQueries } from './queries/workflow-schedules';
import { watchPostgresChanges } from './watch';

/** The NOTIFY channel of commits (payload: the committing backend's id). */
export const CHANGES_CHANNEL = 'runnel_changes';

/** Options of {@link openPostgresStorage}. */
export interface PostgresStorageOptions {
  /** Refuse every write with DATABASE_READONLY; nothing is migrated. Default false. */
  readonly?: boolean;
  /**
   * Refuse a database without Runnel's schema (NOT_FOUND) instead of creating it there: commands
   * that read or act on instances, as a missing file is refused on SQLite. Default false.
   */
  mustExist?: boolean;
  /** Apply pending migrations (default true; never when read-only). */
  migrate?: boolean;
  /** How long one statement waits for a lock (another process's instance), ms: the session's lock_timeout. Default 5000. */
  busyTimeoutMs?: number;
  /** Attempts of a write transaction that keeps conflicting (see the module doc), default 12. */
  txRetries?: number;
  /** Connections of the read pool, default 4. */
  poolSize?: number;
  /** Use LISTEN/NOTIFY for {@link StorageBackend.watchChanges} (default true; false polls, as on a server without NOTIFY). */
  listen?: boolean;
  /** How long a change feed read waits for the write transactions running when it starts, ms (./changes.ts). Default 2000. */
  feedWaitMs?: number;
  /** Called when a write transaction is rolled back to run again (see the module doc): the driver's error (its SQLSTATE in `code`) and the attempt that failed (1-based). */
  onConflict?: (err: unknown, attempt: number) => void;
}

/** The PostgreSQL backend, with what only it has (tests). */
export interface PostgresStorage extends StorageBackend {
  /** The write path's bridge now (tests: statements outside the port, the thread's death); a dead one is replaced at the next write. */
  readonly bridge: SyncBridge;
  /** This backend's id: the payload of its NOTIFYs. */
  readonly id: string;
  /** The read pool. */
  readonly pool: pg.Pool;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Delay before retry `n` (0-based) of a conflicting transaction, ms: full jitter over min(200, 2·2^n). */
function conflictBackoffMs(n: number): number {
  return Math.max(1, Math.round(Math.min(200, 2 * 2 ** Math.min(n, 10)) * Math.random()));
}

/** `model` with every read's driver errors typed (./errors.ts). */
function typedReads(model: ReadModel, url: string): ReadModel {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(model) as [string, (...args: unknown[]) => Promise<unknown>][]) {
    out[name] = async (...args: unknown[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        throw postgresError(err, url) ?? err;
      }
    };
  }
  return out as unknown as ReadModel;
}

/**
 * Connects to the database at `url` (synchronously, on the bridge's thread), applies pending
 * migrations, and returns it as a storage backend.
 *
 * @throws EngineError NOT_FOUND (no such database), DATABASE_UNAVAILABLE (refused, unreachable,
 *   authentication failed — the password never appears in the message), DATABASE_NEWER (a schema
 *   newer than this build), DATABASE_READONLY (read-only and the schema needs migrating).
 */
export function openPostgresStorage(url: string, options: PostgresStorageOptions = {}): PostgresStorage {
  const location = redactUrl(url);
  const readonly = options.readonly === true;
  const busyTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000));
  let bridge: SyncBridge;
  const bridgeOptions: BridgeOptions = {
    // A session stuck inside a transaction (its process stopped) lets go of its locks after a minute.
    // READ COMMITTED whatever the server's default: each statement after an instance lock sees the latest commits (./queries/context.ts).
    sessionSql: [
      `SET default_transaction_isolation = 'read committed'`,
      `SET lock_timeout = ${busyTimeoutMs}`,
      `SET idle_in_transaction_session_timeout = 60000`,
    ],
    // Every write transaction holds the change feed's lock in SHARE mode from its start (./changes.ts).
    beginSql: WRITE_BEGIN_SQL,
  };
  try {
    bridge = openBridge(url, bridgeOptions);
  } catch (err) {
    throw postgresError(err, url) ?? err;
  }
  try {
    if (options.mustExist && !schemaPresent(bridge)) {
      throw new EngineError('NOT_FOUND', `database ${location} has no Runnel schema (run "npx runnel init --db <url>" first)`, {
        details: { location },
      });
    }
    if (readonly) checkReadableSchema(bridge, location);
    else if (options.migrate !== false) migratePostgres((sql, params) => bridge.query(sql, params), location);
  } catch (err) {
    void bridge.close();
    throw postgresError(err, url) ?? err;
  }
  return postgresStorage(url, bridge, bridgeOptions, options);
}

/** Whether the database has Runnel's schema table. */
function schemaPresent(bridge: SyncBridge): boolean {
  return bridge.query<{ p: boolean }>(`SELECT to_regclass('runnel_schema') IS NOT NULL AS p`).rows[0]?.p === true;
}

/** A read-only open cannot migrate: the schema must be this build's. */
function checkReadableSchema(bridge: SyncBridge, location: string): void {
  const present = schemaPresent(bridge);
  const version = present ? Number(bridge.query<{ v: number }>('SELECT coalesce(max(version), 0) AS v FROM runnel_schema').rows[0]?.v ?? 0) : 0;
  if (version > PG_SCHEMA_VERSION) migratePostgres((sql, params) => bridge.query(sql, params), location); // throws DATABASE_NEWER
  if (version < PG_SCHEMA_VERSION) {
    throw new EngineError(
      'DATABASE_READONLY',
      `${location} has schema version ${version} and must be migrated to ${PG_SCHEMA_VERSION} before this Runnel can read it, but it is opened read-only`,
      { retryable: false },
    );
  }
}

/** The backend over an open bridge (see the module doc). */
function postgresStorage(url: string, first: SyncBridge, bridgeOptions: BridgeOptions, options: PostgresStorageOptions): PostgresStorage {
  let bridge = first;
  const location = redactUrl(url);
  const readonly = options.readonly === true;
  const id = randomUUID();
  const retries = Math.max(1, options.txRetries ?? 12);
  const pool = new pg.Pool({ ...clientConfig(url), max: options.poolSize ?? 4 });
  // An idle pooled connection the server drops must not crash the process: the next read reconnects.
  pool.on('error', () => {});

  // ------------------------------------------------------------ the transaction's state
  let locked = new Set<number>();
  let lockLog: number[] = [];
  let names = new Set<string>();
  let nameLog: string[] = [];
  let wrote = false;
  let savepoints = 0;
  /** Void statements wait for the next one that answers (see the module doc); off for a write run again to place an error. */
  let deferring = true;

  const LOCK_INSTANCE = `SELECT pg_advisory_xact_lock(${instanceLockKeys('$1')})`;
  const LOCK_NAME = `SELECT pg_advisory_xact_lock(${WORKFLOW_LOCK_SPACE}, hashtext($1))`;
  const tx: PgTx = {
    run<R>(sql: string, params: readonly unknown[]): QueryResult<R> {
      const r = bridge.query<R>(sql, params);
      if (r.rowCount > 0 && r.command !== 'SELECT') wrote = true;
      return r;
    },
    exec(sql, params) {
      wrote = true;
      if (deferring) bridge.queue(sql, params);
      else bridge.query(sql, params);
    },
    lockInstance(instanceId) {
      if (locked.has(instanceId)) return;
      if (deferring) bridge.queue(LOCK_INSTANCE, [instanceId]);
      else bridge.query(LOCK_INSTANCE, [instanceId]);
      locked.add(instanceId);
      lockLog.push(instanceId);
    },
    holdsInstance(instanceId) {
      if (locked.has(instanceId)) return;
      locked.add(instanceId);
      lockLog.push(instanceId);
    },
    lockWorkflow(name) {
      if (names.has(name)) return;
      if (deferring) bridge.queue(LOCK_NAME, [name]);
      else bridge.query(LOCK_NAME, [name]);
      names.add(name);
      nameLog.push(name);
    },
  };
  const failure = (err: unknown): boolean => bridge.dead || isStorageFailure(err);
  const queries: WriteQueries = {
    schedule: createScheduleQueries(tx),
    nodes: createNodeQueries(tx),
    instances: createInstanceQueries(tx),
    history: createHistoryQueries(tx),
    children: createChildQueries(tx),
    events: createEventQueries(tx),
    retention: createRetentionQueries(tx),
    workflows: createWorkflowQueries(tx),
    consumers: createConsumerQueries(tx),
    states: createStateQueries(tx),
    workflowSchedules: createWorkflowScheduleQueries(tx),
    savepoint<T>(fn: () => T): T {
      const name = `s${++savepoints}`;
      bridge.query(`SAVEPOINT ${name}`);
      const marks = [lockLog.length, nameLog.length] as const;
      try {
        const r = fn();
        bridge.query(`RELEASE SAVEPOINT ${name}`);
        return r;
      } catch (err) {
        if (failure(err)) throw err;
        // Statements of the savepoint still queued never reach the server: it is undone anyway.
        bridge.discardQueued();
        bridge.query(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`);
        // Locks taken after a savepoint are released when it is rolled back to (PostgreSQL manual, "Explicit Locking").
        for (const i of lockLog.splice(marks[0])) locked.delete(i);
        for (const n of nameLog.splice(marks[1])) names.delete(n);
        throw err;
      }
    },
    isStorageFailure: failure,
  };

  const begin = (): void => {
    locked = new Set();
    lockLog = [];
    names = new Set();
    nameLog = [];
    wrote = false;
    savepoints = 0;
    bridge.begin();
  };

  let closed = false;
  /** The lease renewal the bridge's thread runs, posted again to a new thread. */
  let leases: Record<string, unknown> | undefined;
  /** A bridge whose thread died (a crash, out of memory) is replaced by a new one at the next write. */
  const ensureBridge = (): void => {
    if (!bridge.dead || closed) return;
    const old = bridge;
    bridge = openBridge(url, bridgeOptions);
    void old.close();
    if (leases) bridge.post(leases);
  };
  // Some PostgreSQL variants have no NOTIFY: then commits go without it (watchers poll).
  let notify = true;
  const write = async <T>(fn: (q: WriteQueries) => T): Promise<T> => {
    if (readonly) throw new EngineError('DATABASE_READONLY', `database ${location} is open read-only; this needs to change it`, { retryable: false });
    deferring = true;
    for (let n = 0; ; n++) {
      if (closed) throw new EngineError('DATABASE_UNAVAILABLE', `database ${location} is closed`);
      try {
        ensureBridge();
        begin();
        const tracked = trackStates(queries, { derive: STATE_EFFECTS, verify: CHECK_STATE_RECORD });
        const result = fn(tracked.queries);
        tracked.finish();
        if (!wrote) bridge.commit();
        else if (!notify) bridge.commit();
        else {
          try {
            bridge.commitWith(`SELECT pg_notify('${CHANGES_CHANNEL}', '${id}'); COMMIT`);
          } catch (err) {
            const code = (err as { code?: string }).code;
            if (code !== '0A000' && code !== '42883') throw err;
            // No NOTIFY here: the transaction was aborted with it; run it again without.
            notify = false;
            n--;
            continue;
          }
        }
        return result;
      } catch (err) {
        if (bridge.inTransaction) bridge.rollback();
        if (deferring && err instanceof PgQueryError && !failure(err) && !isRetryableTx(err)) {
          // A deferred statement failed where a later one was sent, outside the code that would have
          // caught it: run again with every statement sent in place, so it fails where it belongs.
          deferring = false;
          n--;
          continue;
        }
        if (!isRetryableTx(err)) throw postgresError(err, url) ?? err;
        options.onConflict?.(err, n + 1);
        // A unique key taken by a race is free on the next run; one taken again and again is a bug, kept as it is.
        if ((err as { code?: string }).code === '23505' && n + 1 >= 3) throw err;
        if (n + 1 >= retries) {
          throw new EngineError('DATABASE_BUSY', `database ${location}: a write kept conflicting with other writers after ${n + 1} attempts`, {
            cause: err,
            details: { location, sqlState: (err as { code?: string }).code },
          });
        }
        await sleep(conflictBackoffMs(n));
      }
    }
  };

  const read = typedReads({ ...createPostgresReadModel(pool), ...createPostgresChangeReads(pool, options.feedWaitMs), ...createPostgresStateReads(pool), ...createPostgresScheduleReads(pool) }, url);
  let leaseSeq = 0;
  const watchers = new Set<() => void>();

  return {
    location,
    readonly,
    get bridge() {
      return bridge;
    },
    id,
    pool,
    write,
    read,
    keepLeases({ owner, leaseMs, stallMs }): LeaseKeeper {
      const alive = new BigInt64Array(new SharedArrayBuffer(8));
      Atomics.store(alive, 0, BigInt(Date.now()));
      const message = { type: 'leases', owner, leaseMs, stallMs, alive };
      leases = message;
      bridge.post(message);
      let stopped: Promise<void> | undefined;
      return {
        alive: () => void Atomics.store(alive, 0, BigInt(Date.now())),
        stop: () => {
          stopped ??= (async () => {
            const seq = ++leaseSeq;
            if (leases === message) leases = undefined;
            const b = bridge;
            const done = b.waitFor((m) => (m as { type?: string; id?: number }).type === 'leases-stopped' && (m as { id?: number }).id === seq);
            b.post({ type: 'no-leases', id: seq });
            await done;
          })();
          return stopped;
        },
      };
    },
    health: () => ({}),
    releaseLeases: (owner, now) => write((q) => q.schedule.releaseLeases({ owner, now })),
    // PostgreSQL keeps its own house (autovacuum, checkpoints): nothing runs beside the worker.
    startUpkeep() {},
    async stopUpkeep() {},
    watchChanges(onChange, intervalMs) {
      const stop = watchPostgresChanges({ url, pool, self: id, channel: CHANGES_CHANNEL, listen: options.listen !== false }, onChange, intervalMs);
      const once = (): void => {
        if (!watchers.delete(once)) return;
        stop();
      };
      watchers.add(once);
      return once;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const w of [...watchers]) w();
      await bridge.close();
      await pool.end().catch(() => {});
    },
  };
}
