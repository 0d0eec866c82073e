/**
 * The code of the sync bridge's thread (engine/db/postgres/bridge.ts): plain JavaScript evaluated
 * in a worker thread, so no TypeScript loader is needed there (in tests, the CLI or the packaged
 * app), as engine/db/upkeep-thread.ts does for SQLite. It `require`s the same `pg` as the engine.
 *
 * What it holds:
 * - the write connection: one `pg` Client, opened on `connect`, reopened on the next request after
 *   the server dropped it. Requests come on the MessagePort handed over in `workerData.port`; each
 *   answer is posted back on it, then `state[0]` is set to 1 and notified (the engine's thread
 *   waits on it with `Atomics.wait` and takes the answer with `receiveMessageOnPort`).
 * - a heartbeat: `state[1]` goes up every {@link HEARTBEAT_MS} while the thread's event loop
 *   turns, so the engine's thread can tell a dead thread from a slow query; at exit `state[0]`
 *   becomes 2 (dead) and is notified, so a wait in progress ends at once.
 * - lease renewal (messages on `parentPort`, not the sync port): a connection of its own that,
 *   every leaseMs / 6, extends the leases of `owner` more than a third used, while the loop said it
 *   was alive within `stallMs` (the rules of engine/db/upkeep-thread.ts). Rows another transaction
 *   holds are skipped (`FOR UPDATE SKIP LOCKED`): that transaction is committing them anyway, and
 *   waiting for it could deadlock with it.
 *
 * A request inside a transaction carries `conn`, the connection its BEGIN ran on: when that
 * connection is gone, the request fails with 08003 instead of running on a new one outside the
 * transaction (a ROLLBACK then answers ok: nothing is left to undo).
 *
 * A `batch` request carries several statements (`items`) run in order, the answer the last one's:
 * they are pipelined (written without waiting for each answer: `pg`'s `pipeline` mode), and the
 * first that fails is the answer. A last statement without parameters waits for the others.
 *
 * Answers: `{ id, ok: true, rows, rowCount, command, conn }` or `{ id, ok: false, error }`, `error` the
 * driver's error as plain data (`message`, `code` — the SQLSTATE, or a Node errno code such as
 * ECONNREFUSED —, `detail`, `constraint`, …).
 */

/** Interval of the thread's heartbeat (`state[1]`), ms. */
export const HEARTBEAT_MS = 100;

/** The thread's source (see the module doc). */
export const BRIDGE_THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const pg = require(workerData.pgModule);
// Epoch ms and ids are BIGINT and below 2^53: numbers, not strings.
pg.types.setTypeParser(20, (v) => Number(v));
const state = workerData.state;
const port = workerData.port;
const HEARTBEAT_MS = ${HEARTBEAT_MS};
process.on('exit', () => { Atomics.store(state, 0, 2); Atomics.notify(state, 0); });
setInterval(() => { Atomics.add(state, 1, 1); }, HEARTBEAT_MS);

function plainError(err) {
  const e = err || {};
  const out = { message: String(e.message || e) };
  for (const k of ['code', 'detail', 'hint', 'constraint', 'table', 'column', 'severity', 'routine', 'errno', 'syscall', 'address', 'port']) {
    if (e[k] !== undefined && e[k] !== null) out[k] = typeof e[k] === 'number' ? e[k] : String(e[k]);
  }
  return out;
}

function answer(m) {
  port.postMessage(m);
  Atomics.store(state, 0, 1);
  Atomics.notify(state, 0);
}

function newClient() {
  // Pipelined: a batch's statements go out without waiting for each answer (runBatch).
  const c = new pg.Client({ connectionString: workerData.url, application_name: workerData.applicationName, pipeline: true });
  // A connection the server drops raises 'error' on the client: the next request reconnects.
  c.on('error', () => { if (client === c) client = undefined; });
  return c;
}

let client;
let connId = 0;
let names = new Map();
async function connect() {
  const c = newClient();
  try {
    await c.connect();
    for (const s of workerData.sessionSql) await c.query(s);
  } catch (err) {
    c.end().catch(() => {});
    throw err;
  }
  client = c;
  connId++;
  names = new Map();
}

// Statements sent with parameters are prepared once per connection (named): later runs skip parsing.
function named(sql) {
  let n = names.get(sql);
  if (n === undefined) { n = 'r' + names.size; names.set(sql, n); }
  return n;
}

// Errors after which the connection is not to be used again (lost, or shut down by the server).
const broken = (err) => !err || /^(08|57P)/.test(String(err.code)) || /^E[A-Z]+$/.test(String(err.code)) || /Connection terminated|not queryable/.test(String(err.message));

// The write connection for request \`m\`, connected if need be; a request of a transaction whose
// connection is gone fails with 08003 (\`null\`: a ROLLBACK of it, which has nothing left to undo).
async function writeClient(m) {
  if (m.conn !== undefined && (!client || m.conn !== connId)) {
    // The transaction died with its connection: nothing may run outside it as if it were inside.
    if (m.sql === 'ROLLBACK') return null;
    const e = new Error('the connection to the database was lost inside the transaction');
    e.code = '08003';
    throw e;
  }
  if (!client) await connect();
  return client;
}

function send(c, item) {
  return item.params === undefined ? c.query(item.sql) : c.query({ name: named(item.sql), text: item.sql, values: item.params });
}

function shape(r) {
  const last = Array.isArray(r) ? r[r.length - 1] : r;
  return { rows: last ? last.rows : [], rowCount: last ? last.rowCount || 0 : 0, command: last ? last.command : '' };
}

function dropIfBroken(c, err) {
  if (broken(err) && client === c) { client = undefined; c.end().catch(() => {}); }
}

async function run(m) {
  if (m.type === 'connect') { if (!client) await connect(); return { rows: [], rowCount: 0, command: 'CONNECT' }; }
  if (m.type === 'die') process.exit(1);
  if (m.type === 'hang') for (;;) { /* a thread stuck for good: its heartbeat stops */ }
  const c = await writeClient(m);
  if (c === null) return { rows: [], rowCount: 0, command: 'ROLLBACK' };
  try {
    return shape(await send(c, m));
  } catch (err) {
    dropIfBroken(c, err);
    throw err;
  }
}

// A batch: statements queued by the engine's thread (their answers not needed) and the one it waits
// for, pipelined: written together, answered in order, one round trip to the server instead of
// one each. The first that fails is the answer (those after it fail too: the transaction is
// aborted). A last statement without parameters (a COMMIT, a savepoint's release) goes only once
// the others succeeded, so a failure is never followed by a COMMIT that would end the transaction.
async function runBatch(m) {
  const c = await writeClient(m);
  if (c === null) return { rows: [], rowCount: 0, command: 'ROLLBACK' };
  const items = m.items;
  const hold = items[items.length - 1].params === undefined;
  const sent = (hold ? items.slice(0, -1) : items).map((item) => send(c, item));
  const settled = await Promise.allSettled(sent);
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) {
    dropIfBroken(c, failed.reason);
    throw failed.reason;
  }
  if (!hold) return shape(settled[settled.length - 1].value);
  try {
    return shape(await send(c, items[items.length - 1]));
  } catch (err) {
    dropIfBroken(c, err);
    throw err;
  }
}

port.on('message', (m) => {
  (m.type === 'batch' ? runBatch(m) : run(m)).then(
    (r) => answer({ id: m.id, ok: true, rows: r.rows, rowCount: r.rowCount, command: r.command, conn: connId }),
    (err) => answer({ id: m.id, ok: false, error: plainError(err), conn: connId }),
  );
});

// ---------------------------------------------------------------- leases
let leaseTimer, leaseClient, leaseOpts, leaseBusy = false;
const RENEW = 'UPDATE schedule SET next_run_at = $1, lease_expires_at = $1 WHERE id IN (' +
  'SELECT id FROM schedule WHERE lease_owner = $2 AND lease_expires_at IS NOT NULL AND lease_expires_at < $3 FOR UPDATE SKIP LOCKED)';
async function renew() {
  const o = leaseOpts;
  const now = Date.now();
  if (!o || now - Number(Atomics.load(o.alive, 0)) > o.stallMs) return;
  if (!leaseClient) {
    const c = new pg.Client({ connectionString: workerData.url, application_name: workerData.applicationName + ' leases' });
    c.on('error', () => { if (leaseClient === c) leaseClient = undefined; });
    await c.connect();
    leaseClient = c;
  }
  await leaseClient.query({ name: 'renew', text: RENEW, values: [now + o.leaseMs, o.owner, now + Math.floor((o.leaseMs * 2) / 3)] });
}
function scheduleRenew() {
  const o = leaseOpts;
  if (!o) return;
  leaseTimer = setTimeout(() => {
    leaseBusy = true;
    // Errors (the server away, a connection dropped) skip a round: the next one, well before the lease ends, tries again.
    renew().catch(() => { const c = leaseClient; leaseClient = undefined; if (c) c.end().catch(() => {}); })
      .finally(() => { leaseBusy = false; if (leaseOpts === o) scheduleRenew(); if (pendingStop) pendingStop(); });
  }, Math.max(5, Math.floor(o.leaseMs / 6)));
}
let pendingStop;
parentPort.on('message', (m) => {
  if (m.type === 'leases') { clearTimeout(leaseTimer); leaseOpts = m; scheduleRenew(); }
  else if (m.type === 'no-leases') {
    clearTimeout(leaseTimer); leaseOpts = undefined;
    const done = () => { pendingStop = undefined; parentPort.postMessage({ type: 'leases-stopped', id: m.id }); };
    if (leaseBusy) pendingStop = done; else done();
  } else if (m.type === 'stop') {
    clearTimeout(leaseTimer); leaseOpts = undefined;
    const ends = [client, leaseClient].filter(Boolean).map((c) => c.end().catch(() => {}));
    client = undefined; leaseClient = undefined;
    Promise.all(ends).finally(() => process.exit(0));
  }
});
`;
