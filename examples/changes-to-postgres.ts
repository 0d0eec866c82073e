/**
 * Example: tail Runnel's change feed into PostgreSQL (an analytics copy of every transition),
 * exactly once across crashes and restarts.
 *
 *   node --import tsx examples/changes-to-postgres.ts --db runnel.db --pg postgres://localhost/analytics
 *     [--consumer NAME] [--workflow W] [--batch N] [--poll MS] [--once]
 *
 * `--db` is the Runnel database (a SQLite file or a postgres:// URL), `--pg` the target. It
 * creates two tables there when missing:
 * - `runnel_change`: one row per feed entry, keyed by `cursor` (the history id), with the entry's
 *   fields (`at` in epoch ms, `data_json` as Runnel stores it; cast it with `::jsonb`);
 * - `runnel_change_cursor(consumer, cursor)`: how far the target holds the feed.
 *
 * Each batch (`changes:read` after the target's cursor, at most `--batch` entries) is inserted
 * with the new cursor in ONE target transaction; only after it commits is the batch acknowledged
 * to Runnel (`changes:ack` under consumer `--consumer`, default `changes-to-postgres`), which
 * lets retention delete those entries. Killed between the two, the restart resumes from the
 * target's own cursor, so nothing is written twice (the primary key would refuse it) and nothing
 * is skipped (retention kept everything above the acknowledged cursor); the next batch's ack
 * catches the consumer up. Idle, it reads again after another process commits, or every `--poll`
 * ms (default 200). `--once` exits when it has caught up; otherwise SIGINT/SIGTERM end it after
 * the batch in hand (exit 0). Each committed batch prints one JSON line:
 * `{"exported":n,"cursor":c}`.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { ChangeEntry, Output, Result } from '../engine/api/contract';
import { createHandlers, dispatch } from '../engine/api/handlers';
import { Engine, Faults } from '../engine/api';

/** The target's tables (created when missing). */
const TARGET_SCHEMA = `
CREATE TABLE IF NOT EXISTS runnel_change (
  cursor BIGINT PRIMARY KEY,
  instance_id BIGINT,
  workflow TEXT,
  workflow_version INTEGER,
  node_id TEXT,
  type TEXT NOT NULL,
  at BIGINT NOT NULL,
  attempt INTEGER,
  actor TEXT,
  data_json TEXT
);
CREATE TABLE IF NOT EXISTS runnel_change_cursor (
  consumer TEXT PRIMARY KEY,
  cursor BIGINT NOT NULL
);`;

const COLUMNS = ['cursor', 'instance_id', 'workflow', 'workflow_version', 'node_id', 'type', 'at', 'attempt', 'actor', 'data_json'] as const;

function usage(message: string): never {
  process.stderr.write(
    `changes-to-postgres: ${message}\n` +
      'usage: node --import tsx examples/changes-to-postgres.ts --db <runnel.db | postgres://…> --pg <postgres://…> ' +
      '[--consumer NAME] [--workflow W] [--batch N] [--poll MS] [--once]\n',
  );
  process.exit(2);
}

function positive(name: string, text: string | undefined, fallback: number, max: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > max) usage(`--${name} must be a whole number from 1 to ${max} (got "${text}")`);
  return n;
}

/** The value of a contract call, or the error thrown with its code. */
function valueOf<T>(r: Result<unknown>, channel: string): T {
  if (!r.ok) throw Object.assign(new Error(`${channel}: ${r.error.code}: ${r.error.message}`), { code: r.error.code });
  return r.value as T;
}

/** Writes `entries` and the cursor `cursor` into the target in one transaction. */
async function commitBatch(target: pg.Client, consumer: string, entries: ChangeEntry[], cursor: number): Promise<void> {
  await target.query('BEGIN');
  try {
    if (entries.length > 0) {
      const params: unknown[] = [];
      const rows = entries.map((e) => {
        const values = [e.cursor, e.instanceId, e.workflow, e.workflowVersion, e.nodeId, e.type, e.at, e.attempt, e.actor, e.data === undefined ? null : JSON.stringify(e.data)];
        return `(${values.map((v) => (params.push(v), `$${params.length}`)).join(', ')})`;
      });
      await target.query(`INSERT INTO runnel_change (${COLUMNS.join(', ')}) VALUES ${rows.join(', ')}`, params);
    }
    await target.query(
      `INSERT INTO runnel_change_cursor (consumer, cursor) VALUES ($1, $2)
       ON CONFLICT (consumer) DO UPDATE SET cursor = excluded.cursor`,
      [consumer, cursor],
    );
    await target.query('COMMIT');
  } catch (err) {
    await target.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      db: { type: 'string' },
      pg: { type: 'string' },
      consumer: { type: 'string', default: 'changes-to-postgres' },
      workflow: { type: 'string' },
      batch: { type: 'string' },
      poll: { type: 'string' },
      once: { type: 'boolean', default: false },
    },
  });
  if (values.db === undefined) usage('--db is required (the Runnel database)');
  if (values.pg === undefined) usage('--pg is required (the target PostgreSQL URL)');
  const consumer = values.consumer;
  const batch = positive('batch', values.batch, 500, 10_000);
  const pollMs = positive('poll', values.poll, 200, 3_600_000);
  const workflow = values.workflow;

  // Fault points are for tests: armed only with RUNNEL_ENABLE_FAULTS=1 (engine/runtime/faults.ts).
  const faults = Faults.fromEnv(process.env.RUNNEL_ENABLE_FAULTS === '1' ? process.env.RUNNEL_FAULTS : undefined);
  const engine = Engine.open(values.db);
  const handlers = createHandlers(engine);
  const target = new pg.Client({ connectionString: values.pg });
  let stopping = false;
  let wake: () => void = () => undefined;
  const stop = () => {
    stopping = true;
    wake();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const unwatch = engine.storage.watchChanges(() => wake(), pollMs);
  try {
    await target.connect();
    await target.query(TARGET_SCHEMA);
    // The target's cursor is the truth: it commits with the rows it stands for.
    const held = await target.query<{ cursor: string }>('SELECT cursor FROM runnel_change_cursor WHERE consumer = $1', [consumer]);
    let after = held.rows[0] === undefined ? 0 : Number(held.rows[0].cursor);
    // Registers the consumer, or catches it up after a crash between a commit and its ack.
    valueOf(await dispatch(handlers, 'changes:ack', { consumer, cursor: after }), 'changes:ack');
    while (!stopping) {
      const r = await dispatch(handlers, 'changes:read', { after, limit: batch, ...(workflow === undefined ? {} : { workflow }) });
      if (!r.ok && r.error.code === 'DATABASE_BUSY') {
        await new Promise((resolve) => setTimeout(resolve, pollMs));
        continue;
      }
      const page = valueOf<Output<'changes:read'>>(r, 'changes:read');
      if (page.cursor > after) {
        await commitBatch(target, consumer, page.entries, page.cursor);
        process.stdout.write(`${JSON.stringify({ exported: page.entries.length, cursor: page.cursor })}\n`);
        const last = page.entries[page.entries.length - 1];
        if (faults.armed) faults.hit('change-exported', { instanceId: last?.instanceId ?? 0, nodeId: last?.nodeId ?? null });
        valueOf(await dispatch(handlers, 'changes:ack', { consumer, cursor: page.cursor }), 'changes:ack');
        after = page.cursor;
      }
      if (page.entries.length === batch) continue;
      if (values.once) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = () => undefined;
    }
  } finally {
    unwatch();
    await target.end().catch(() => undefined);
    await engine.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`changes-to-postgres: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
