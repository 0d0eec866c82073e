/**
 * The checks of a workflow's `schedules` the schema cannot make: each cron expression and time
 * zone parses (croner), and ids are unique. Problems name the schedule: `schedules[0].cron: …`.
 */
import { cronProblem } from './schedules';
import { isRecord, problem, type Problem } from './validate-problems';

/** Appends the problems of the raw `schedules` value (read leniently: the schema reports its shape). */
export function checkSchedules(raw: unknown, problems: Problem[]): void {
  if (!Array.isArray(raw)) return;
  const seen = new Map<string, number>();
  raw.forEach((s: unknown, i) => {
    if (!isRecord(s)) return;
    const id = typeof s['id'] === 'string' ? s['id'] : undefined;
    const named = id === undefined ? '' : ` (schedule "${id}")`;
    if (id !== undefined) {
      const first = seen.get(id);
      if (first !== undefined) problems.push(problem('DUPLICATE_ID', { label: `schedules[${i}].id` }, `"${id}" is the id of schedules[${first}] too`, ['schedules', i, 'id']));
      else seen.set(id, i);
    }
    const tz = typeof s['timezone'] === 'string' && s['timezone'] !== '' ? s['timezone'] : undefined;
    if (typeof s['cron'] === 'string' && s['cron'] !== '') {
      const why = cronProblem(s['cron'], tz);
      if (why !== undefined) {
        const onTz = tz !== undefined && why.startsWith('unknown time zone');
        const field = onTz ? 'timezone' : 'cron';
        problems.push(problem('INVALID_FIELD', { label: `schedules[${i}].${field}` }, `${why}${named}`, ['schedules', i, field]));
      }
    }
  });
}
