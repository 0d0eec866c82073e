/**
 * The order of a claim when instances have priorities: the highest priority first, oldest first
 * within one (`next_run_at`), written once over the statements each backend prepares.
 *
 * Both backends keep a row's priority on the row (`schedule.priority`, its instance's) and index
 * only the rows whose priority is not 0 (migration 7 / PostgreSQL 4). One index over
 * `(priority, next_run_at)` scanned in order would walk every future row of a level (timers,
 * leases, parked rows) before reaching the next level: a claim over 100,000 waiting timers would
 * read them all. Instead the levels are visited as a loose index scan — the next level below is
 * one `max(priority) … WHERE priority < ?` seek — and each level is one range read that stops at
 * its first row not yet due. With no prioritized row at all (the common file) a claim is the one
 * statement it was, its `NOT EXISTS` over the empty index evaluated once; a claim that finds
 * nothing asks once more whether levels exist.
 */
import type { ScheduleRow } from './queries';

/** The statements {@link claimByPriority} runs, prepared by a backend. */
export interface PriorityLevels<Row extends ScheduleRow = ScheduleRow> {
  /** The highest non-zero priority of any row, below `below` when given; undefined when none. */
  highest(below: number | undefined): number | undefined;
  /** Due rows of priority `priority` (not 0), oldest first, at most `limit`. */
  level(priority: number, limit: number): Row[];
  /** Due rows of priority 0, oldest first, at most `limit`. */
  zero(limit: number): Row[];
  /** Due rows, oldest first, at most `limit`, when no row has a non-zero priority; else none. */
  allWhenNone(limit: number): Row[];
}

/**
 * Due rows, at most `limit`: every level above 0 (highest first), then 0, then the levels below
 * 0; oldest first within a level. Statements: one when no row has a priority and some are due,
 * else two, plus two per level visited.
 */
export function claimByPriority<Row extends ScheduleRow>(limit: number, s: PriorityLevels<Row>): Row[] {
  const plain = s.allWhenNone(limit);
  if (plain.length > 0) return plain;
  let p = s.highest(undefined);
  if (p === undefined) return plain;
  const out: Row[] = [];
  let zeroDone = false;
  while (out.length < limit) {
    if (p !== undefined && p > 0) {
      out.push(...s.level(p, limit - out.length));
      p = s.highest(p);
    } else if (!zeroDone) {
      out.push(...s.zero(limit - out.length));
      zeroDone = true;
    } else if (p !== undefined) {
      out.push(...s.level(p, limit - out.length));
      p = s.highest(p);
    } else break;
  }
  return out;
}
