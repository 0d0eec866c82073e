/**
 * A child process holding one real write transaction of the storage port open on PostgreSQL
 * (change feed tests): it appends a history event of no instance, prints `APPENDED <id>`, and
 * keeps the transaction open — the synchronous transition waiting — until the file `gate` exists;
 * then it commits (or, with `rollback`, throws so the write rolls back), prints `COMMITTED` or
 * `ROLLED BACK`, and exits.
 *
 * Usage: node --import tsx test/helpers/held-writer.ts <postgres url> <gate file> [rollback]
 */
import fs from 'node:fs';
import { openPostgresStorage } from '../../engine/db/postgres/storage';

const [url, gate, mode] = process.argv.slice(2);
if (url === undefined || gate === undefined) throw new Error('usage: held-writer.ts <url> <gate> [rollback]');
const storage = openPostgresStorage(url);
const nap = new Int32Array(new SharedArrayBuffer(4));
try {
  await storage.write((q) => {
    const id = q.history.append({ instanceId: null, nodeId: null, type: 'test.held', at: Date.now(), data: { held: true } });
    process.stdout.write(`APPENDED ${id}\n`);
    // Synchronously, as a transition runs: the transaction stays open meanwhile.
    while (!fs.existsSync(gate)) Atomics.wait(nap, 0, 0, 10);
    if (mode === 'rollback') throw new Error('rolled back on purpose');
  });
  process.stdout.write('COMMITTED\n');
} catch (err) {
  if ((err as Error).message !== 'rolled back on purpose') throw err;
  process.stdout.write('ROLLED BACK\n');
} finally {
  await storage.close();
}
