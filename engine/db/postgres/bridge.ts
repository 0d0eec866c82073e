/**
 * The sync bridge: synchronous PostgreSQL queries for the engine's thread, so that the runtime's
 * state machine runs over the same synchronous {@link Queries} on both backends (pg-plan, "The
 * shape"; the pattern of the `synckit` package).
 *
 * A worker thread (./bridge-thread.ts) owns one `pg` Client. The engine's thread posts
 * `{ sql, params }` on a MessagePort and blocks in `Atomics.wait` on a shared flag; the thread runs
 * the query, posts the rows back and `Atomics.notify`s; the engine's thread takes them with
 * `receiveMessageOnPort`. Nothing async runs on the engine's thread meanwhile: a write transaction
 * stays one synchronous stretch, as BEGIN IMMEDIATE … COMMIT is on SQLite.
 *
 * Errors come back as {@link PgQueryError} with the server's SQLSTATE in `code` (or the Node errno
 * code of a connection that failed: ECONNREFUSED, …). A thread that died (crashed, or was ended)
 * is noticed within a wait — by its exit mark, or by its heartbeat standing still for
 * {@link BridgeOptions.deadAfterMs} — and every request after it fails with EngineError
 * DATABASE_UNAVAILABLE; it never hangs the engine.
 *
 * Cost (measured 2026-12-02 on this 2-core VM's local 15.x cluster over 127.0.0.1, a prepared
 * `SELECT $1::int`, medians of 2,000 runs, test/integration/db/postgres/bridge.test.ts "measures
 * its per-query overhead"): 102 µs a query through the bridge against 56 µs awaited on a `pg`
 * Client directly — the thread hop adds about 50 µs per statement (runs of the test: +47 to +66 µs).
 * That is what batching void writes (pg-plan, "Later optimization") would save per statement.
 */
import { createRequire } from 'node:module';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { EngineError } from '../../errors';
import { BRIDGE_THREAD_SOURCE, HEARTBEAT_MS } from './bridge-thread';

/** A query's answer. */
export interface QueryResult<R = Record<string, unknown>> {
  /** The rows of the (last) statement, columns by name; BIGINT as numbers. */
  rows: R[];
  /** Rows the statement returned or changed. */
  rowCount: number;
  /** The statement's command tag: `SELECT`, `INSERT`, `UPDATE`, `DELETE`, … */
  command: string;
}

/** The driver's error as the thread carried it back: `code` is the SQLSTATE (or a Node errno code). */
export class PgQueryError extends Error {
  /** SQLSTATE (`40001`, `23505`, …) or a Node errno code (`ECONNREFUSED`, …); undefined when the driver gave none. */
  readonly code: string | undefined;
  /** The server's DETAIL, constraint and table, when it gave them. */
  readonly detail: string | undefined;
  readonly constraint: string | undefined;
  readonly table: string | undefined;

  constructor(e: { message: string; code?: string; detail?: string; constraint?: string; table?: string }) {
    super(e.message);
    this.name = 'PgQueryError';
    this.code = e.code;
    this.detail = e.detail;
    this.constraint = e.constraint;
    this.table = e.table;
  }
}

/** Options of {@link openBridge}. */
export interface BridgeOptions {
  /** Statements run on each new write connection (e.g. `SET lock_timeout = 5000`). */
  sessionSql?: readonly string[];
  /**
   * What {@link SyncBridge.begin} sends: `BEGIN`, and statements every transaction runs first
   * (`BEGIN; SELECT pg_advisory_xact_lock_shared(…)`: the change feed's writer lock). Default `BEGIN`.
   */
  beginSql?: string;
  /** `application_name` of its connections (pg_stat_activity). Default `runnel`. */
  applicationName?: string;
  /** A request whose thread showed no heartbeat for this long fails (the thread is dead), ms. Default 5000. */
  deadAfterMs?: number;
}

/** Synchronous queries over a thread's connection (see the module doc). */
export interface SyncBridge {
  /**
   * Runs one statement and waits for its answer on this thread. With `params` it is prepared
   * (once per connection) and bound; without, it goes as a simple query, which may hold several
   * statements separated by `;` (the answer is the last one's).
   *
   * @throws PgQueryError (with its SQLSTATE `code`) when the statement fails; EngineError
   *   DATABASE_UNAVAILABLE when the thread is dead or closed.
   */
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): QueryResult<R>;
  /**
   * Queues a statement of the open transaction whose answer nobody needs (a void write, a lock):
   * it is sent with the next request that waits for an answer — a query, the COMMIT, a savepoint's
   * release — in one round trip between the threads, and runs before it, in order. Its error, if
   * any, is thrown by that request. Outside a transaction it runs at once (as {@link query}).
   */
  queue(sql: string, params?: readonly unknown[]): void;
  /** Drops the queued statements unsent (the transaction or savepoint they belong to is being rolled back). */
  discardQueued(): void;
  /**
   * BEGIN: the queries until {@link commit} / {@link rollback} belong to one transaction on one
   * connection. The BEGIN itself goes with the transaction's first request.
   */
  begin(): void;
  /** COMMIT (the transaction's end whatever the answer). @throws PgQueryError as {@link query}. */
  commit(): void;
  /** `sql` (which must end with COMMIT) as the transaction's last request: one round trip for a final statement and the commit. */
  commitWith(sql: string): void;
  /** ROLLBACK; never throws (a lost connection has nothing left to roll back). */
  rollback(): void;
  /** Whether a transaction is open (between begin and commit/rollback). */
  readonly inTransaction: boolean;
  /** Whether the thread is gone (closed, or died): every request fails. */
  readonly dead: boolean;
  /** Posts a message to the thread's `parentPort` side (lease renewal: see ./bridge-thread.ts). */
  post(message: unknown): void;
  /** Waits for a message of the thread's `parentPort` side matching `match`, or its exit. */
  waitFor(match: (m: unknown) => boolean): Promise<void>;
  /** Tests: makes the thread exit in the middle of a request, as a crash would; the request throws DATABASE_UNAVAILABLE. */
  crashForTest(): void;
  /** Tests: makes the thread hang for good in the middle of a request; after `deadAfterMs` without a heartbeat the request throws DATABASE_UNAVAILABLE and the thread is ended. */
  hangForTest(): void;
  /** Ends the connections and the thread; resolves when it has exited. Safe to call twice. */
  close(): Promise<void>;
}

/** The thread's state flag values (`state[0]`). */
const WAITING = 0;
const DEAD = 2;

/**
 * Starts a bridge thread on `url` and connects its write connection, synchronously.
 *
 * @throws PgQueryError when the connection fails (ECONNREFUSED, 28P01 authentication, 3D000 no
 *   such database, …: the caller types it, see ./errors.ts); EngineError DATABASE_UNAVAILABLE
 *   when the thread cannot start or died.
 */
export function openBridge(url: string, options: BridgeOptions = {}): SyncBridge {
  const deadAfterMs = options.deadAfterMs ?? 5000;
  const state = new Int32Array(new SharedArrayBuffer(8));
  const { port1, port2 } = new MessageChannel();
  let worker: Worker;
  try {
    worker = new Worker(BRIDGE_THREAD_SOURCE, {
      eval: true,
      workerData: {
        url,
        state,
        port: port2,
        pgModule: createRequire(import.meta.url).resolve('pg'),
        applicationName: options.applicationName ?? 'runnel',
        sessionSql: options.sessionSql ?? [],
      },
      transferList: [port2],
      // A cap, not a reservation: a turn may carry back many 1 MiB variables documents at once.
      resourceLimits: { maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 16, stackSizeMb: 1 },
    });
  } catch (err) {
    throw new EngineError('DATABASE_UNAVAILABLE', `cannot start the database thread: ${(err as Error).message}`, { cause: err });
  }
  worker.unref();
  let gone = false;
  const exited = new Promise<void>((resolve) => {
    const done = (): void => {
      gone = true;
      resolve();
    };
    worker.once('exit', done);
    worker.once('error', done);
  });
  let nextId = 0;
  let txConn: number | undefined;
  /** The connection the last answer (or error) came from. */
  let lastConn: number | undefined;
  let closing: Promise<void> | undefined;
  /** Given up on (no heartbeat): ended, whether or not its exit was seen yet. */
  let broken = false;

  const deadError = (why: string): EngineError => new EngineError('DATABASE_UNAVAILABLE', `the database thread ${why}`, { retryable: true });

  const call = (m: Record<string, unknown>, patienceMs = deadAfterMs): { rows: unknown[]; rowCount: number; command: string; conn: number } => {
    if (gone || broken || closing || Atomics.load(state, 0) === DEAD) throw deadError(closing ? 'is closed' : 'is gone');
    const id = ++nextId;
    Atomics.store(state, 0, WAITING);
    port1.postMessage({ ...m, id });
    let beat = Atomics.load(state, 1);
    let beatAt = Date.now();
    for (;;) {
      const got = receiveMessageOnPort(port1) as
        | { message: { id: number; ok: boolean; rows: unknown[]; rowCount: number; command: string; conn: number; error?: { message: string; code?: string } } }
        | undefined;
      if (got) {
        const a = got.message;
        if (a.id !== id) continue; // an answer to a request given up on: not ours
        lastConn = a.conn;
        if (!a.ok) throw new PgQueryError(a.error ?? { message: 'unknown error' });
        return a;
      }
      const s = Atomics.load(state, 0);
      if (s === DEAD) throw deadError('died during a request');
      if (s !== WAITING) {
        // Answered, but the message is not visible yet: look again.
        Atomics.store(state, 0, WAITING);
        continue;
      }
      Atomics.wait(state, 0, WAITING, HEARTBEAT_MS * 2);
      const b = Atomics.load(state, 1);
      if (b !== beat) {
        beat = b;
        beatAt = Date.now();
      } else if (Date.now() - beatAt > patienceMs) {
        broken = true;
        void worker.terminate();
        throw deadError(`stopped answering (no heartbeat for ${patienceMs} ms)`);
      }
    }
  };

  try {
    // The thread's first heartbeat comes once it has loaded `pg`: a busy machine gets longer.
    call({ type: 'connect' }, Math.max(deadAfterMs, 15_000));
  } catch (err) {
    void worker.terminate();
    port1.close();
    throw err;
  }

  /** Statements queued for the next request (see {@link SyncBridge.queue}); a transaction's BEGIN waits here too. */
  let queued: { sql: string; params: unknown[] | undefined }[] = [];
  /** The transaction: none, begun but nothing sent yet (its BEGIN queued), or open on the server. */
  let txState: 'none' | 'queued' | 'open' = 'none';
  /** `sql` sent with the queued statements before it, in one message; the first send of a transaction learns its connection. */
  const send = (sql: string, params: readonly unknown[] | undefined) => {
    const item = { sql, params: params === undefined ? undefined : [...params] };
    const items = [...queued, item];
    queued = [];
    const first = txState === 'queued';
    if (first) txState = 'open';
    try {
      return items.length === 1 ? call({ type: 'query', ...item, conn: txConn }) : call({ type: 'batch', items, conn: txConn });
    } finally {
      if (first) txConn = lastConn;
    }
  };
  const endTx = (): void => {
    txState = 'none';
    txConn = undefined;
    queued = [];
  };

  const bridge: SyncBridge = {
    query<R>(sql: string, params?: readonly unknown[]): QueryResult<R> {
      const a = send(sql, params);
      return { rows: a.rows as R[], rowCount: a.rowCount, command: a.command };
    },
    queue(sql, params) {
      if (txState === 'none') {
        bridge.query(sql, params);
        return;
      }
      queued.push({ sql, params: params === undefined ? undefined : [...params] });
    },
    discardQueued() {
      // A transaction's BEGIN not sent yet stays queued: the transaction goes on.
      queued = txState === 'queued' ? queued.slice(0, 1) : [];
    },
    begin() {
      if (txState !== 'none') throw new EngineError('INTERNAL', 'a transaction is already open on this connection');
      // Sent with the transaction's first statement: one round trip fewer per transaction.
      txState = 'queued';
      queued = [{ sql: options.beginSql ?? 'BEGIN', params: undefined }];
    },
    commit() {
      // Nothing was sent: there is nothing to commit.
      if (txState === 'queued' && queued.length === 1) {
        endTx();
        return;
      }
      bridge.commitWith('COMMIT');
    },
    commitWith(sql) {
      try {
        send(sql, undefined);
      } catch (err) {
        // A statement before the COMMIT failed: the rest was skipped, the transaction is still open (aborted).
        const conn = txConn;
        endTx();
        try {
          call({ type: 'query', sql: 'ROLLBACK', conn });
        } catch {
          // the connection is gone, and the transaction with it
        }
        throw err;
      }
      endTx();
    },
    rollback() {
      const sent = txState === 'open';
      const conn = txConn;
      endTx();
      if (!sent) return;
      try {
        call({ type: 'query', sql: 'ROLLBACK', conn });
      } catch {
        // A dead thread or a lost connection: the server ends the transaction itself.
      }
    },
    get inTransaction() {
      return txState !== 'none';
    },
    get dead() {
      return gone || broken || closing !== undefined || Atomics.load(state, 0) === DEAD;
    },
    post(message) {
      if (!gone) worker.postMessage(message);
    },
    async waitFor(match) {
      worker.ref();
      try {
        await Promise.race([
          exited,
          new Promise<void>((resolve) => {
            const on = (m: unknown): void => {
              if (!match(m)) return;
              worker.off('message', on);
              resolve();
            };
            worker.on('message', on);
          }),
        ]);
      } finally {
        worker.unref();
      }
    },
    crashForTest() {
      call({ type: 'die' });
    },
    hangForTest() {
      call({ type: 'hang' });
    },
    close() {
      closing ??= (async () => {
        endTx();
        // Referenced while it exits: an unreferenced thread would let the process end with this wait pending.
        worker.ref();
        if (!gone) worker.postMessage({ type: 'stop' });
        const timer = setTimeout(() => void worker.terminate(), 2000);
        await exited;
        clearTimeout(timer);
        port1.close();
      })();
      return closing;
    },
  };
  return bridge;
}
