/**
 * The SQLite implementation of the storage port ({@link StorageBackend}): one database file.
 *
 * Writes go through {@link RunnelDb.write} (BEGIN IMMEDIATE, the process's one serialized write
 * path, SQLITE_BUSY backoff with jitter) and run their transition synchronously inside it with
 * every query family prepared once on the connection; reads are the read model's statements on
 * the same connection. The upkeep thread (checkpoints, lease renewal) starts when first needed.
 */
import { EngineError } from '../errors';
import { databaseError } from './damage';
import type { LeaseKeeper, ReadModel, SqliteFileAccess, StorageBackend, WriteQueries } from '../store/port';
import path from 'node:path';
import fs from 'node:fs';
import { isBusyError, openDatabase, WAL_SIZE_LIMIT_BYTES, type OpenOptions, type RunnelDb } from './open-database';
import { createNodeQueries } from './queries/nodes';
import { createHistoryQueries, createInstanceQueries } from './queries/instances';
import { createChildQueries, createEventQueries } from './queries/children';
import { createReadModel } from './queries/read-model';
import { createChangeReads, createConsumerQueries } from './queries/changes';
import { createRetentionQueries } from './queries/retention';
import { createScheduleQueries } from './queries/schedule';
import { createStateQueries, createStateReads } from './queries/history-state';
import { StateCache, trackStates } from '../store/history-state';
import { CHECK_STATE_RECORD, STATE_EFFECTS } from '../store/state-effects';
import { createWorkflowQueries } from './queries/workflows';
import { createScheduleReads, createWorkflowScheduleQueries } from './queries/workflow-schedules';
import { startUpkeepThread, type UpkeepThread } from './upkeep-thread';

/**
 * `model` with every read's database errors typed (engine/db/damage.ts): damaged pages mark the
 * file damaged, so nothing is written to it any more.
 */
function typedReads(model: ReadModel, db: RunnelDb, onDamaged: () => void): ReadModel {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(model) as [string, (...args: unknown[]) => Promise<unknown>][]) {
    out[name] = async (...args: unknown[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        const d = databaseError(err, db.file);
        if (!d) throw err;
        if (d.damaged) {
          db.markDamaged(d.error);
          onDamaged();
        }
        throw d.error;
      }
    };
  }
  return out as unknown as ReadModel;
}

/** The SQLite backend, with its database handle for what only SQLite has (tests, the benchmark, PRAGMAs). */
export interface SqliteStorage extends StorageBackend {
  /** The open file. */
  readonly db: RunnelDb;
}

/** Options of {@link openSqliteStorage}. */
export interface SqliteStorageOptions extends OpenOptions {
  /** Interval of the upkeep thread's PASSIVE checkpoints, ms; 0 leaves checkpoints to the connection. Default 20. */
  checkpointIntervalMs?: number;
  /**
   * Whether every transaction checks time travel's record (engine/store/history-state.ts
   * TrackOptions.verify). Default: RUNNEL_CHECK_STATE_RECORD=1 (the test suite sets it).
   */
  checkStateRecord?: boolean;
}

/**
 * Opens (creating and migrating if needed) the database `file` as a storage backend.
 *
 * @throws EngineError as openDatabase: NOT_FOUND, DATABASE_CORRUPT, DATABASE_NEWER, DATABASE_READONLY.
 */
export function openSqliteStorage(file: string, options: SqliteStorageOptions = {}): SqliteStorage {
  const db = openDatabase(file, options);
  try {
    return sqliteStorage(db, options);
  } catch (err) {
    // Preparing the statements met a schema that is not this build's (a table dropped by hand).
    db.close();
    throw databaseError(err, db.file)?.error ?? err;
  }
}

/** A storage backend over an open database. */
export function sqliteStorage(db: RunnelDb, options: SqliteStorageOptions = {}): SqliteStorage {
  const raw = db.raw;
  const workflows = createWorkflowQueries(raw);
  const savepoint = raw.transaction((fn: () => unknown) => fn());
  const queries: WriteQueries = {
    schedule: createScheduleQueries(raw),
    nodes: createNodeQueries(raw),
    instances: createInstanceQueries(raw),
    history: createHistoryQueries(raw),
    children: createChildQueries(raw),
    events: createEventQueries(raw),
    retention: createRetentionQueries(raw),
    workflows,
    consumers: createConsumerQueries(raw),
    states: createStateQueries(raw),
    workflowSchedules: createWorkflowScheduleQueries(raw),
    savepoint: <T>(fn: () => T): T => savepoint(fn) as T,
    isStorageFailure: (err) => {
      if (isBusyError(err)) return true;
      const d = databaseError(err, db.file);
      return d !== undefined && (d.damaged || d.error.code === 'DATABASE_FULL');
    },
  };
  const walAutocheckpoint = Math.max(0, Math.floor(options.walAutocheckpoint ?? 1000));
  const walLimitBytes = Math.max(0, Math.floor(options.walLimitBytes ?? WAL_SIZE_LIMIT_BYTES));
  const checkpointMs = options.checkpointIntervalMs ?? 20;
  let upkeep: UpkeepThread | undefined;
  let upkeepTried = false;
  // A damaged file gets no more writes, the upkeep thread's checkpoints and lease renewals included.
  const haltUpkeep = (): void => {
    const t = upkeep;
    upkeep = undefined;
    upkeepTried = true;
    void t?.stop();
  };
  const read = typedReads({ ...createReadModel(raw, workflows), ...createChangeReads(raw), ...createStateReads(raw), ...createScheduleReads(raw) }, db, haltUpkeep);
  const thread = (): UpkeepThread | undefined => {
    if (!upkeepTried && db.file !== ':memory:' && !db.readonly && !db.damaged) {
      upkeepTried = true;
      upkeep = startUpkeepThread(db.file, options.nativeBinding === undefined ? {} : { nativeBinding: options.nativeBinding });
    }
    return upkeep;
  };
  const stopIdleThread = async (): Promise<void> => {
    const t = upkeep;
    if (!t || t.busy) return;
    upkeep = undefined;
    upkeepTried = false;
    await t.stop();
  };

  const AUTO_VACUUM = ['none', 'full', 'incremental'] as const;
  const file: SqliteFileAccess | undefined =
    db.file === ':memory:'
      ? undefined
      : {
          path: path.resolve(db.file),
          nativeBinding: options.nativeBinding,
          stats: () => {
            const size = (p: string): number => fs.statSync(p, { throwIfNoEntry: false })?.size ?? 0;
            return {
              bytes: size(db.file),
              walBytes: size(`${db.file}-wal`),
              pageSize: raw.pragma('page_size', { simple: true }) as number,
              pageCount: raw.pragma('page_count', { simple: true }) as number,
              freePages: raw.pragma('freelist_count', { simple: true }) as number,
              autoVacuum: AUTO_VACUUM[raw.pragma('auto_vacuum', { simple: true }) as number] ?? 'none',
            };
          },
          incrementalVacuum: (pages) =>
            db.write(() => {
              raw.pragma(`incremental_vacuum(${Math.max(1, Math.floor(pages))})`);
              return raw.pragma('freelist_count', { simple: true }) as number;
            }),
        };

  // Time travel's record of the states this connection's transactions left (engine/store/history-state.ts).
  const states = new StateCache();
  const checkStateRecord = options.checkStateRecord ?? CHECK_STATE_RECORD;
  let knownVersion = -1;
  // Prepared once: `db.pragma()` compiles its statement at every call (1% of a transition's CPU, profiled).
  const dataVersion = raw.prepare<[], number>('PRAGMA data_version').pluck();

  return {
    db,
    location: db.file,
    readonly: db.readonly,
    ...(file === undefined ? {} : { file }),
    write: async (fn) => {
      let attempts = 0;
      try {
        return await db.write(() => {
          // Another connection committed since this one's last transaction, or this is a second
          // attempt of the same function (the first one's cache update did not commit): what the
          // cache knew may be stale.
          const version = dataVersion.get() ?? -1;
          if (version !== knownVersion || attempts++ > 0) {
            states.clear();
            knownVersion = version;
          }
          const tracked = trackStates(queries, { cache: states, derive: STATE_EFFECTS, verify: checkStateRecord });
          const r = fn(tracked.queries);
          tracked.finish();
          // The states this transaction ends with go to the cache now, before COMMIT, not once the
          // commit's promise resolved: in between, another write of this connection could begin
          // with what the cache knew before this one (a cancel racing a claim read the instance
          // as it was before the claim). A COMMIT that fails clears the cache (below).
          tracked.committed();
          return r;
        });
      } catch (err) {
        states.clear();
        if (db.damaged) haltUpkeep();
        throw err;
      }
    },
    read,
    keepLeases({ owner, leaseMs, stallMs }): LeaseKeeper {
      const alive = new BigInt64Array(new SharedArrayBuffer(8));
      Atomics.store(alive, 0, BigInt(Date.now()));
      const t = thread();
      t?.keepLeases({ owner, leaseMs, stallMs, alive });
      return {
        alive: () => void Atomics.store(alive, 0, BigInt(Date.now())),
        stop: async () => {
          await t?.stopLeases();
          await stopIdleThread();
        },
      };
    },
    health() {
      if (db.file === ':memory:') return {};
      let bytes = 0;
      try {
        bytes = fs.statSync(`${db.file}-wal`).size;
      } catch {
        // no WAL file (closed cleanly, or read-only): nothing pending
      }
      const checkpoints = upkeep?.checkpointStats();
      return { wal: { bytes, limitBytes: walLimitBytes }, ...(checkpoints ? { checkpoints } : {}) };
    },
    releaseLeases: (owner, now) => db.write(() => queries.schedule.releaseLeases({ owner, now })),
    startUpkeep() {
      // Checkpoints off the hot path, unless automatic checkpoints were turned off (walAutocheckpoint 0).
      if (walAutocheckpoint === 0 || checkpointMs <= 0) return;
      thread()?.startCheckpoints(checkpointMs);
    },
    async stopUpkeep() {
      upkeep?.stopCheckpoints();
      await stopIdleThread();
    },
    watchChanges(onChange, intervalMs) {
      // One `PRAGMA data_version` per interval, which SQLite changes only when another connection
      // committed (https://sqlite.org/pragma.html#pragma_data_version): this backend's own writes never trigger it.
      const readVersion = (): number => dataVersion.get() ?? -1;
      let last = readVersion();
      const timer = setInterval(() => {
        let now: number;
        try {
          now = readVersion();
        } catch {
          return; // busy or closing: try again next tick
        }
        if (now === last) return;
        last = now;
        onChange();
      }, Math.max(10, intervalMs));
      timer.unref?.();
      return () => clearInterval(timer);
    },
    async close() {
      const t = upkeep;
      upkeep = undefined;
      await t?.stop();
      try {
        if (!db.damaged) db.checkpoint('PASSIVE');
      } catch (err) {
        console.error('runnel: checkpoint at close failed', err instanceof EngineError ? err.message : (err as Error).message);
      }
      db.close();
    },
  };
}
