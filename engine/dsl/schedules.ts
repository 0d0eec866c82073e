/**
 * Schedules of a workflow (issue 13): cron starts, parsed and stepped with croner (daylight-saving
 * rules of the IANA time zones included).
 *
 * Shared with the renderer (the designer shows the next due times): imports nothing from Node.
 */
import { Cron } from 'croner';

/** At most this many missed due times are started by `catchUp: "all"` (the latest ones); older ones are skipped and recorded. */
export const MAX_CATCH_UP = 100;

/**
 * A due time is missed (catch-up applies to it) when it passed more than this long ago, ms: a
 * worker that was busy or polling a few seconds late still starts it as usual.
 */
export const MISSED_AFTER_MS = 60_000;

/** A cron expression with its time zone, ready to step. */
export interface CronSchedule {
  /** The first due time strictly after `after` (epoch ms), or null when there is none. */
  nextAfter(after: number): number | null;
  /** The next `n` due times strictly after `after` (epoch ms). */
  next(n: number, after: number): number[];
  /** The `n` latest due times at or before `at` (epoch ms), newest first. */
  latest(n: number, at: number): number[];
}

/**
 * Parses `cron` (5 or 6 fields) in `timezone` (IANA name; default UTC).
 *
 * @throws Error with croner's reason when the expression or the time zone is invalid (the caller
 *   names the schedule: see {@link scheduleProblem}).
 */
export function parseCron(cron: string, timezone?: string): CronSchedule {
  const fields = cron.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) throw new Error(`a cron expression has 5 fields (minute hour day month weekday) or 6 (seconds first), not ${fields}`);
  if (timezone !== undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    } catch {
      throw new Error(`unknown time zone "${timezone}" (an IANA name such as "Europe/Berlin")`);
    }
  }
  const job = new Cron(cron, { paused: true, timezone: timezone ?? 'Etc/UTC', mode: '5-or-6-parts' });
  // An expression that never matches (February 30th) is refused too: it would never fire.
  if (job.nextRun(new Date(0)) === null) throw new Error('the expression matches no time');
  return {
    nextAfter: (after) => job.nextRun(new Date(after))?.getTime() ?? null,
    next: (n, after) => job.nextRuns(n, new Date(after)).map((d) => d.getTime()),
    // previousRuns is strictly before its reference, in whole seconds: the next second takes `at` in.
    latest: (n, at) => job.previousRuns(n, new Date(Math.floor(at / 1000) * 1000 + 1000)).map((d) => d.getTime()),
  };
}

/** Why `cron` in `timezone` is refused, or undefined when it parses. */
export function cronProblem(cron: string, timezone?: string): string | undefined {
  try {
    parseCron(cron, timezone);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message.replace(/^CronPattern: /, '') : String(err);
  }
}
