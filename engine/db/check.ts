/**
 * `runnel check`: SQLite's own `PRAGMA integrity_check` and `foreign_key_check`, then the engine's
 * invariants, read in one read transaction on a read-only connection of its own (a consistent
 * snapshot while workers commit; nothing is written, not even a migration).
 *
 * The invariants (DESIGN.md section 2; issue 14):
 * - `RUNNING_WITHOUT_LEASE`: a RUNNING node of an instance not ended has no schedule row holding it,
 *   so nothing will ever finish or retry it (a lease that expired is not one: its row comes due
 *   and another worker takes the step over);
 * - `ORPHAN_SCHEDULE_ROW`: a schedule row whose instance is missing or ended (an end deletes every
 *   row of its instance), or whose node has no state in that instance;
 * - `STUCK_INSTANCE`: a live instance (PENDING, RUNNING, WAITING, COMPENSATING), not paused (a
 *   paused one waits for its unpause), with no work queued (a run, timer, timeout, compensation or
 *   wake row), no approval waiting for a person, no event node waiting for an event, and no node
 *   waiting for child instances still live;
 * - `HELD_WITH_ROOM`: an instance held for a concurrency slot (PENDING, `held`) while its slot has
 *   fewer instances in progress than its workflow version's limit: admission happens when one of
 *   them ends, so it waits for nothing (for ever, when none is in progress);
 * - `HISTORY_ORDER`: an instance's history does not start with its `instance.created` event, or an
 *   event is dated more than {@link CLOCK_SLACK_MS} before the one before it with no recorded
 *   clock jump in between: ids no longer increase with time (the change feed's cursor relies on it);
 * - `WAL_OVER_BOUND`: the write-ahead log is larger than its bound (a reader holds old frames);
 * - `INTEGRITY`, `FOREIGN_KEY`: what SQLite's checks say.
 *
 * Damage found (`INTEGRITY`) is recorded as a read that meets damaged pages records it
 * (engine/db/damage.ts `recordDamage`: `<file>-damaged` beside the file), so that no Runnel process
 * writes into the damaged file after the check said so, until a person removes the note. The
 * note is the one thing a check writes, and only beside the file.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { EngineError } from '../errors';
import { damageMarker, isCorruptError, recordDamage } from './damage';
import { accessError, WAL_SIZE_LIMIT_BYTES } from './open-database';

/** The kinds of {@link Violation}, each a line of the module doc. */
export const VIOLATION_KINDS = [
  'INTEGRITY',
  'FOREIGN_KEY',
  'RUNNING_WITHOUT_LEASE',
  'ORPHAN_SCHEDULE_ROW',
  'STUCK_INSTANCE',
  'HELD_WITH_ROOM',
  'HISTORY_ORDER',
  'WAL_OVER_BOUND',
] as const;
/** One of {@link VIOLATION_KINDS}. */
export type ViolationKind = (typeof VIOLATION_KINDS)[number];

/** One problem `runnel check` found: its kind, a sentence, and what it is about (ids where known). */
export interface Violation {
  kind: ViolationKind;
  message: string;
  instanceId?: number;
  nodeId?: string;
  scheduleId?: number;
  historyId?: number;
}

/** What {@link checkDatabase} found. */
export interface CheckReport {
  /** The absolute path checked. */
  file: string;
  /** True when no violation was found. */
  ok: boolean;
  violations: Violation[];
  /**
   * What was looked at: instances, live instances (a worker moves them on: PENDING, RUNNING, WAITING,
   * COMPENSATING), SUSPENDED instances (waiting for a person's resume), schedule rows, history rows,
   * WAL bytes and its bound.
   */
  counts: { instances: number; live: number; suspended: number; schedule: number; history: number; walBytes: number; walLimitBytes: number };
  /**
   * A damage note beside the file (`<file>-damaged`: written by this check when it found
   * `INTEGRITY` violations, or by any process before) that a person should remove once the file is sound, or null.
   */
  damageMarker: string | null;
  /** How long the check took, ms. */
  elapsedMs: number;
}

/** How far an event may be dated before the one before it (an NTP slew, another process's clock), ms. */
export const CLOCK_SLACK_MS = 1000;

/** Violations of one kind listed at most (the rest are counted in one more violation). */
const MAX_PER_KIND = 100;

const LIVE = `('PENDING', 'RUNNING', 'WAITING', 'COMPENSATING')`;
const ENDED = `('COMPLETED', 'FAILED', 'CANCELLED')`;

/** The invariant queries: each row is one violation. */
const QUERIES: { kind: ViolationKind; sql: string; message: (r: Record<string, unknown>) => string }[] = [
  {
    kind: 'RUNNING_WITHOUT_LEASE',
    sql: `SELECT n.instance_id AS instanceId, n.node_id AS nodeId FROM node_state n JOIN instance i ON i.id = n.instance_id
          WHERE n.status = 'RUNNING' AND i.status NOT IN ${ENDED}
            AND NOT EXISTS (SELECT 1 FROM schedule s WHERE s.instance_id = n.instance_id AND s.node_id = n.node_id
                            AND s.kind IN ('run', 'compensate') AND s.lease_owner IS NOT NULL)
          ORDER BY n.instance_id, n.node_id LIMIT ${MAX_PER_KIND + 1}`,
    message: (r) => `instance ${String(r.instanceId)} node ${String(r.nodeId)} is RUNNING but no schedule row holds it: nothing will finish or retry it`,
  },
  {
    kind: 'ORPHAN_SCHEDULE_ROW',
    sql: `SELECT s.id AS scheduleId, s.instance_id AS instanceId, s.node_id AS nodeId, s.kind AS kind, i.status AS status,
                 (s.node_id IS NOT NULL AND i.id IS NOT NULL AND n.node_id IS NULL) AS noNode
          FROM schedule s LEFT JOIN instance i ON i.id = s.instance_id
          LEFT JOIN node_state n ON n.instance_id = s.instance_id AND n.node_id = s.node_id
          WHERE i.id IS NULL OR i.status IN ${ENDED} OR (s.node_id IS NOT NULL AND n.node_id IS NULL)
          ORDER BY s.id LIMIT ${MAX_PER_KIND + 1}`,
    message: (r) =>
      `schedule row ${String(r.scheduleId)} (${String(r.kind)}) ` +
      (r.status === null
        ? `belongs to instance ${String(r.instanceId)}, which does not exist`
        : r.noNode
          ? `names node ${String(r.nodeId)}, which instance ${String(r.instanceId)} does not have`
          : `belongs to instance ${String(r.instanceId)}, which has ended (${String(r.status)})`),
  },
  {
    kind: 'STUCK_INSTANCE',
    sql: `SELECT i.id AS instanceId, i.status AS status FROM instance i
          WHERE i.status IN ${LIVE}
            -- A paused instance waits for a person: its unpause (a map's next item starts then).
            AND i.paused_at IS NULL
            AND NOT EXISTS (SELECT 1 FROM schedule s WHERE s.instance_id = i.id AND s.kind <> 'deadline')
            AND NOT EXISTS (SELECT 1 FROM node_state n WHERE n.instance_id = i.id AND n.status = 'WAITING'
                            AND (json_extract(n.wait_json, '$.kind') = 'approval'
                                 OR (json_extract(n.wait_json, '$.kind') = 'event' AND json_extract(n.wait_json, '$.received') IS NULL)
                                 OR (json_extract(n.wait_json, '$.kind') = 'children' AND EXISTS (
                                      SELECT 1 FROM child c JOIN instance k ON k.id = c.child_id
                                       WHERE c.instance_id = n.instance_id AND c.node_id = n.node_id AND c.attempt = n.attempt
                                         AND k.status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')))))
          ORDER BY i.id LIMIT ${MAX_PER_KIND + 1}`,
    message: (r) => `instance ${String(r.instanceId)} is ${String(r.status)} but has no work queued and waits for no person: it will never move`,
  },
  {
    kind: 'HELD_WITH_ROOM',
    sql: `SELECT * FROM (
            SELECT i.id AS instanceId, json_extract(w.dsl_json, '$.concurrency.limit') AS lim,
                   (SELECT count(*) FROM instance o WHERE o.concurrency_key = i.concurrency_key AND o.held = 0 AND o.status NOT IN ${ENDED}) AS inUse
            FROM instance i JOIN workflow w ON w.id = i.workflow_id
            WHERE i.held = 1 AND i.status NOT IN ${ENDED} AND i.concurrency_key IS NOT NULL)
          WHERE lim IS NULL OR inUse < lim ORDER BY instanceId LIMIT ${MAX_PER_KIND + 1}`,
    message: (r) =>
      r.lim === null
        ? `instance ${String(r.instanceId)} is held for a concurrency slot its workflow version has no limit for: nothing will admit it`
        : `instance ${String(r.instanceId)} is held for a concurrency slot with room (${String(r.inUse)} of ${String(r.lim)} in progress): ` +
          (r.inUse === 0 ? 'nothing will admit it' : 'it waits for an end it does not need'),
  },
  {
    kind: 'HISTORY_ORDER',
    // One row per instance: its first event, when that comes before its `instance.created`.
    sql: `SELECT f.instanceId, f.historyId, (SELECT type FROM history WHERE id = f.historyId) AS type FROM (
            SELECT instance_id AS instanceId, min(id) AS historyId,
                   (SELECT min(c.id) FROM history c WHERE c.instance_id = h.instance_id AND c.type = 'instance.created') AS createdId
            FROM history h WHERE instance_id IS NOT NULL GROUP BY instance_id) f
          WHERE f.historyId < f.createdId
          ORDER BY f.historyId LIMIT ${MAX_PER_KIND + 1}`,
    message: (r) => `history row ${String(r.historyId)} (${String(r.type)}) of instance ${String(r.instanceId)} comes before the instance was created`,
  },
  {
    kind: 'HISTORY_ORDER',
    sql: `SELECT instanceId, historyId, at, prevAt FROM (
            SELECT instance_id AS instanceId, id AS historyId, at,
                   lag(at) OVER (PARTITION BY instance_id ORDER BY id) AS prevAt,
                   lag(id) OVER (PARTITION BY instance_id ORDER BY id) AS prevId
            FROM history WHERE instance_id IS NOT NULL) w
          WHERE prevAt IS NOT NULL AND at < prevAt - ${CLOCK_SLACK_MS}
            AND NOT EXISTS (SELECT 1 FROM history j WHERE j.type = 'clock.jumped' AND j.id > w.prevId AND j.id <= w.historyId)
          ORDER BY historyId LIMIT ${MAX_PER_KIND + 1}`,
    message: (r) =>
      `history row ${String(r.historyId)} of instance ${String(r.instanceId)} is dated ${new Date(Number(r.at)).toISOString()}, ` +
      `${Number(r.prevAt) - Number(r.at)} ms before the event before it, with no clock jump recorded`,
  },
];

function violation(kind: ViolationKind, message: string, r: Record<string, unknown> = {}): Violation {
  const v: Violation = { kind, message };
  if (typeof r.instanceId === 'number') v.instanceId = r.instanceId;
  if (typeof r.nodeId === 'string') v.nodeId = r.nodeId;
  if (typeof r.scheduleId === 'number') v.scheduleId = r.scheduleId;
  if (typeof r.historyId === 'number') v.historyId = r.historyId;
  return v;
}

/** Rows of a query as violations, at most {@link MAX_PER_KIND} and a line counting the rest. */
function listed(kind: ViolationKind, rows: Record<string, unknown>[], message: (r: Record<string, unknown>) => string): Violation[] {
  const out = rows.slice(0, MAX_PER_KIND).map((r) => violation(kind, message(r), r));
  if (rows.length > MAX_PER_KIND) out.push(violation(kind, `… and more ${kind} violations (only the first ${MAX_PER_KIND} are listed)`));
  return out;
}

/**
 * Checks the Runnel database `file` (see the module doc). Damage SQLite reports (a file that is
 * not a database, pages that do not read) is an `INTEGRITY` violation, not an error: the report
 * says what is wrong. The engine's invariants are checked only on a file that passes SQLite's
 * integrity check. Damage found is recorded beside the file (`<file>-damaged`, see the module doc).
 *
 * @param options.walLimitBytes the WAL's bound, bytes (default {@link WAL_SIZE_LIMIT_BYTES}).
 * @throws Error only for what is not about the file's content (it cannot be opened at all: a
 *   missing file is the caller's to refuse first, with probeDatabase).
 */
export function checkDatabase(file: string, options: { walLimitBytes?: number; nativeBinding?: string } = {}): CheckReport {
  const started = Date.now();
  const walLimitBytes = options.walLimitBytes ?? WAL_SIZE_LIMIT_BYTES;
  const violations: Violation[] = [];
  const counts = { instances: 0, live: 0, suspended: 0, schedule: 0, history: 0, walBytes: 0, walLimitBytes };
  const report = (): CheckReport => {
    const damage = violations.filter((v) => v.kind === 'INTEGRITY');
    if (damage.length > 0) {
      // integrity_check's first row may hold many lines: the note keeps the first, and the count.
      const first = (damage[0]?.message ?? '').split('\n').slice(0, 2).join(' ').slice(0, 300);
      const said = `runnel check found ${damage.length} INTEGRITY violation${damage.length === 1 ? '' : 's'}, the first: ${first}`;
      recordDamage(file, new EngineError('DATABASE_CORRUPT', said, { kind: 'user', retryable: false }));
    }
    const marker = fs.existsSync(damageMarker(file)) ? damageMarker(file) : null;
    return { file, ok: violations.length === 0, violations, counts, damageMarker: marker, elapsedMs: Date.now() - started };
  };
  counts.walBytes = fs.statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  if (counts.walBytes > walLimitBytes) {
    violations.push(
      violation(
        'WAL_OVER_BOUND',
        `the write-ahead log is ${counts.walBytes} bytes, above its bound of ${walLimitBytes}: a reader holds old frames (a long read transaction, often in another process)`,
      ),
    );
  }
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, ...(options.nativeBinding === undefined ? {} : { nativeBinding: options.nativeBinding }) });
  } catch (err) {
    if (!isCorruptError(err)) throw accessError(file, err) ?? err;
    violations.push(violation('INTEGRITY', `SQLite cannot open it: ${(err as Error).message}`));
    return report();
  }
  try {
    db.pragma('busy_timeout = 5000');
    db.transaction(() => {
      const integrity = db.pragma('integrity_check') as { integrity_check: string }[];
      const problems = integrity.map((r) => r.integrity_check).filter((m) => m !== 'ok');
      for (const m of problems.slice(0, MAX_PER_KIND)) violations.push(violation('INTEGRITY', `SQLite integrity_check: ${m}`));
      if (problems.length > 0) return; // the tables cannot be trusted: their invariants mean nothing
      const fks = db.pragma('foreign_key_check') as { table: string; rowid: number; parent: string }[];
      violations.push(...listed('FOREIGN_KEY', fks, (r) => `${String(r.table)} row ${String(r.rowid)} refers to a missing ${String(r.parent)} row`));
      const c = db
        .prepare(
          `SELECT (SELECT count(*) FROM instance) AS instances, (SELECT count(*) FROM instance WHERE status IN ${LIVE}) AS live,
                  (SELECT count(*) FROM instance WHERE status = 'SUSPENDED') AS suspended,
                  (SELECT count(*) FROM schedule) AS schedule, (SELECT count(*) FROM history) AS history`,
        )
        .get() as { instances: number; live: number; suspended: number; schedule: number; history: number };
      Object.assign(counts, c);
      for (const q of QUERIES) violations.push(...listed(q.kind, db.prepare(q.sql).all() as Record<string, unknown>[], q.message));
    })();
  } catch (err) {
    if (!isCorruptError(err)) throw accessError(file, err) ?? err;
    violations.push(violation('INTEGRITY', `SQLite cannot read it: ${(err as Error).message}`));
  } finally {
    db.close();
  }
  return report();
}
