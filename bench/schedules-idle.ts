/**
 * What live schedules cost a worker while nothing is due (issue 13: "no measurable CPU with 1,000
 * schedules, said as the CPU seconds used per idle minute"): an engine on a fresh file with
 * `schedules` schedules (a yearly cron each, so none falls due), its worker loop running, and the
 * process's CPU time (user + system, process.cpuUsage) over `durationMs` of wall time after a
 * second's warm-up. Run once with none for the baseline.
 */
import { openEngine } from './engine-run';
import { sleep } from './stats';

/** One idle measurement. */
export interface SchedulesIdle {
  schedules: number;
  durationMs: number;
  /** CPU time the process used in the window, ms. */
  cpuMs: number;
  /** The same per minute of idle wall time, CPU seconds. */
  cpuSecondsPerMinute: number;
}

/** Measures an idle worker with `schedules` live schedules on `file` (see the module doc). */
export async function schedulesIdle(file: string, schedules: number, durationMs: number): Promise<SchedulesIdle> {
  const engine = openEngine(file, 'FULL');
  try {
    await engine.deploy({
      name: 'idle-schedules',
      nodes: [{ id: 'p', type: 'pass' }],
      ...(schedules === 0 ? {} : { schedules: Array.from({ length: schedules }, (_, i) => ({ id: `s${i}`, cron: `${i % 60} ${i % 24} 1 1 *` })) }),
    });
    engine.startWorker();
    await sleep(1000);
    const before = process.cpuUsage();
    await sleep(durationMs);
    const used = process.cpuUsage(before);
    const cpuMs = (used.user + used.system) / 1000;
    return { schedules, durationMs, cpuMs, cpuSecondsPerMinute: (cpuMs / 1000) * (60_000 / durationMs) };
  } finally {
    await engine.close();
  }
}
