/**
 * The retention flags of the commands that work a database (`worker`, `serve`, `prune`):
 * `--retention-completed-days`, `--retention-failed-days`, `--retention-cancelled-days` (a
 * number of days, or `never`) and `--no-retention`, turned into EngineOptions; and the
 * `--older-than` duration of `prune`.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { DAY_MS, type EngineOptions, type RetentionPolicy } from '../api';
import { MAX_RETENTION_DAYS } from '../dsl/schema';

/** The parsed flags (commander's camelCase names). */
export interface RetentionFlags {
  retentionCompletedDays?: number | null;
  retentionFailedDays?: number | null;
  retentionCancelledDays?: number | null;
  /** false with `--no-retention`. */
  retention?: boolean;
}

/** A commander parser of a number of days (0–36,500, fractions allowed) or `never`, naming `flag`. */
function days(flag: string) {
  return (value: string): number | null => {
    if (value === 'never') return null;
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > MAX_RETENTION_DAYS) {
      throw new InvalidArgumentError(`${flag} must be a number of days from 0 to ${MAX_RETENTION_DAYS}, or "never" (got "${value}")`);
    }
    return n;
  };
}

/** Adds the retention flags to `cmd`; `worker`: it also takes `--no-retention`. */
export function retentionFlags(cmd: Command, worker: boolean): Command {
  cmd
    .option('--retention-completed-days <days>', 'default days a COMPLETED instance is kept after it ended, or "never" (default 30; a workflow\'s own retention wins)', days('--retention-completed-days'))
    .option('--retention-failed-days <days>', 'default days a FAILED instance is kept, or "never" (default never)', days('--retention-failed-days'))
    .option('--retention-cancelled-days <days>', 'default days a CANCELLED instance is kept, or "never" (default 30)', days('--retention-cancelled-days'));
  if (worker) cmd.option('--no-retention', 'this process deletes no ended instance (prune by hand with npx runnel prune)');
  return cmd;
}

/** The engine options the flags give. */
export function retentionOptions(o: RetentionFlags): Pick<EngineOptions, 'retention'> {
  if (o.retention === false) return { retention: false };
  const policy: Partial<RetentionPolicy> = {};
  if (o.retentionCompletedDays !== undefined) policy.completedDays = o.retentionCompletedDays;
  if (o.retentionFailedDays !== undefined) policy.failedDays = o.retentionFailedDays;
  if (o.retentionCancelledDays !== undefined) policy.cancelledDays = o.retentionCancelledDays;
  return Object.keys(policy).length === 0 ? {} : { retention: policy };
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: DAY_MS, w: 7 * DAY_MS };

/** A commander parser of `--older-than`: a whole number and a unit, `s`, `m`, `h`, `d` or `w` (`30d`, `12h`); answers ms. */
export function olderThan(value: string): number {
  const m = /^(\d+)([smhdw])$/u.exec(value.trim());
  const ms = m ? Number(m[1]) * (UNITS[m[2] as string] as number) : NaN;
  if (!Number.isSafeInteger(ms)) throw new InvalidArgumentError(`--older-than must be a duration such as 30d, 12h, 90m or 2w (got "${value}")`);
  return ms;
}
