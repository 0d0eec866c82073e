/**
 * A child for C12: holds read transactions open in bursts on a Runnel file and checkpoints in
 * the gaps. `node --import tsx test/helpers/wal-reader.ts <db> [burstMs=200] [gapMs=50]`.
 *
 * Each burst opens a read transaction (BEGIN + a read, which pins a WAL snapshot), keeps it
 * `burstMs`, and ends it; in the gap right after, it runs `PRAGMA wal_checkpoint(PASSIVE)` and
 * records SQLite's `[busy, log, checkpointed]`. Prints `WAL_READER_READY`, and on SIGTERM one
 * JSON line `{ bursts, checkpoints: [[busy, log, checkpointed], …] }`, then exits 0.
 */
import Database from 'better-sqlite3';

const [file = '', burstArg = '200', gapArg = '50'] = process.argv.slice(2);
if (!file) {
  console.error('usage: wal-reader.ts <db> [burstMs] [gapMs]');
  process.exit(2);
}
const burstMs = Number(burstArg);
const gapMs = Number(gapArg);

const db = new Database(file);
db.pragma('busy_timeout = 5000');
const pin = db.prepare<[], { id: number | null }>(`SELECT max(id) AS id FROM history`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

let running = true;
let bursts = 0;
const checkpoints: [number, number, number][] = [];
process.on('SIGTERM', () => {
  running = false;
});

process.stdout.write('WAL_READER_READY\n');
while (running) {
  db.exec('BEGIN');
  pin.get();
  await sleep(burstMs);
  db.exec('COMMIT');
  bursts++;
  const started = Date.now();
  const [row] = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
  if (row) checkpoints.push([row.busy, row.log, row.checkpointed]);
  await sleep(Math.max(0, gapMs - (Date.now() - started)));
}
db.close();
process.stdout.write(`${JSON.stringify({ bursts, checkpoints })}\n`);
process.exit(0);
