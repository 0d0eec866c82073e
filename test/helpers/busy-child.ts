/**
 * A child for C11: runs read-then-write transactions on one instance row of a Runnel file,
 * racing a sibling process. `node --import tsx test/helpers/busy-child.ts <mode> <db> <instanceId>
 * <iterations> <go-file>`.
 *
 * - `deferred`: `BEGIN` (deferred) → SELECT version → hold 1 ms → UPDATE … WHERE version = ?
 *   → COMMIT, on a connection with busy_timeout = 5000. The read takes a WAL snapshot; upgrading
 *   it to a write fails with SQLITE_BUSY / SQLITE_BUSY_SNAPSHOT at once when the sibling wrote
 *   meanwhile: busy_timeout is not consulted for that upgrade.
 * - `engine`: the same body through `RunnelDb.write` (BEGIN IMMEDIATE + backoff with jitter).
 *
 * Prints `BUSY_CHILD_READY`, waits for `go-file` to exist (so both siblings start together), then
 * prints one JSON line `{ mode, ok, conflicts, errors: { [code]: n } }` and exits 0.
 */
import fs from 'node:fs';
import { openDatabase } from '../../engine/db/open-database';

const [mode = '', file = '', idArg = '', itersArg = '', goFile = ''] = process.argv.slice(2);
const instanceId = Number(idArg);
const iterations = Number(itersArg);
if (
  (mode !== 'deferred' && mode !== 'engine') ||
  !file ||
  !goFile ||
  !Number.isInteger(instanceId) ||
  !Number.isInteger(iterations)
) {
  console.error('usage: busy-child.ts deferred|engine <db> <instanceId> <iterations> <go-file>');
  process.exit(2);
}

const hold = new Int32Array(new SharedArrayBuffer(4));
/** Blocks the thread for `ms` inside a transaction (a slow read-modify-write). */
const holdFor = (ms: number) => Atomics.wait(hold, 0, 0, ms);

const db = openDatabase(file, { migrate: false, busyTimeoutMs: 5000 });
const read = db.raw.prepare<[number], { version: number; variables_json: string }>(
  `SELECT version, variables_json FROM instance WHERE id = ?`,
);
const write = db.raw.prepare<[string, number, number]>(
  `UPDATE instance SET variables_json = ?, version = version + 1 WHERE id = ? AND version = ?`,
);

let ok = 0;
let conflicts = 0;
const errors: Record<string, number> = {};

/** One read-modify-write: bump `variables.n` under the row's version check. */
function body(): void {
  const row = read.get(instanceId);
  if (!row) throw new Error(`instance ${instanceId} is missing`);
  holdFor(1);
  const vars = JSON.parse(row.variables_json) as { n?: number };
  const r = write.run(JSON.stringify({ ...vars, n: (vars.n ?? 0) + 1 }), instanceId, row.version);
  if (r.changes === 0) conflicts++;
  else ok++;
}

function record(err: unknown): void {
  const code = (err as { code?: string }).code ?? (err as Error).message;
  errors[code] = (errors[code] ?? 0) + 1;
}

process.stdout.write('BUSY_CHILD_READY\n');
while (!fs.existsSync(goFile)) holdFor(1);

const deferred = db.raw.transaction(body);
for (let i = 0; i < iterations; i++) {
  if (mode === 'deferred') {
    try {
      deferred.deferred();
    } catch (err) {
      record(err);
    }
  } else {
    try {
      await db.write(body);
    } catch (err) {
      record(err);
    }
  }
}
db.close();
process.stdout.write(`${JSON.stringify({ mode, ok, conflicts, errors })}\n`);
