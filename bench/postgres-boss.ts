/**
 * The pg-boss peer (pg-boss 10.4, the newest release that supports Node 20): jobs that each make
 * one transition (created → active → completed, a no-op handler), the counterpart of one engine
 * node attempt.
 *
 * A child process: `node --import tsx bench/postgres-boss.ts '<{"url","jobs","first"}>'` opens
 * pg-boss on a database where {@link installBoss} created its schema and queue, starts its
 * workers ({@link BOSS_WORKERS} `work()` loops of {@link BOSS_BATCH} jobs), prints
 * `BENCH_READY`; on a line on stdin it sends its `jobs` jobs (`insert`, {@link SEND_CHUNK} a
 * statement) while its workers run; it prints `BENCH_PROGRESS <completed>` every 50 ms and exits
 * on the line `stop`. The parent reads the times from the database (see {@link bossTimes}).
 */
import fs from 'node:fs';
import type pg from 'pg';
import PgBoss from 'pg-boss';

/** The queue the bench uses. */
export const QUEUE = 'bench';

/**
 * Jobs one worker loop fetches at a time (the handler gets them as an array; pg-boss completes
 * them with one statement).
 */
export const BOSS_BATCH = 128;

/**
 * `work()` loops per process. pg-boss 10's worker loop waits out its polling interval (0.5 s at
 * least) after each fetch that took less, jobs or not, so one loop moves at most
 * BOSS_BATCH / 0.5 s; several loops per process are how it is run for throughput (pg-boss 11+
 * calls this localConcurrency).
 *
 * Chosen by trying loops × batch = 16 × 32, 64 × 32, 32 × 64, 16 × 128, 64 × 128 and 8 × 256 on
 * 20,000 jobs here (2 shared cores): 16 × 128 was the fastest with 1 and with 4 processes
 * (16 × 32 is bound by the polling interval at ~1,000 jobs/s; more loops or larger batches
 * were slower). pg-boss is given its best configuration found, not the engine's.
 */
export const BOSS_WORKERS = 16;

/** Jobs per `insert` statement while sending. */
export const SEND_CHUNK = 500;

/** pg-boss's options in every process: its minimum polling interval, no maintenance or cron. */
function bossOptions(url: string): PgBoss.ConstructorOptions {
  return {
    connectionString: url,
    pollingIntervalSeconds: 0.5,
    supervise: false,
    schedule: false,
    migrate: false,
    max: BOSS_WORKERS + 4,
  };
}

/** Creates pg-boss's schema and the bench queue in `url`'s database (once, before the workers). */
export async function installBoss(url: string): Promise<void> {
  const boss = new PgBoss({ connectionString: url, supervise: false, schedule: false, migrate: true });
  boss.on('error', (err: Error) => console.error('pg-boss:', err.message));
  await boss.start();
  await boss.createQueue(QUEUE);
  await boss.stop({ graceful: false, wait: true });
}

/** The first send, the last completion (database clock) and the jobs completed. */
export interface BossTimes {
  completed: number;
  /** From the first job's `created_on` to the last `completed_on`, s. */
  seconds: number;
}

/** Reads {@link BossTimes} from pg-boss's job table. */
export async function bossTimes(client: pg.ClientBase): Promise<BossTimes> {
  const r = await client.query<{ completed: string; seconds: number | null }>(
    `SELECT count(*) FILTER (WHERE state = 'completed') AS completed,
            extract(epoch FROM max(completed_on) - min(created_on))::float8 AS seconds
       FROM pgboss.job WHERE name = $1`,
    [QUEUE],
  );
  const row = r.rows[0];
  return { completed: Number(row?.completed ?? 0), seconds: row?.seconds ?? 0 };
}

async function main(arg: string): Promise<void> {
  const { url, jobs, first } = JSON.parse(arg) as { url: string; jobs: number; first: number };
  const boss = new PgBoss(bossOptions(url));
  boss.on('error', (err: Error) => console.error('pg-boss:', err.message));
  await boss.start();
  let completed = 0;
  for (let w = 0; w < BOSS_WORKERS; w++) {
    await boss.work<{ i: number }>(QUEUE, { batchSize: BOSS_BATCH, pollingIntervalSeconds: 0.5 }, (batch) => {
      completed += batch.length;
      return Promise.resolve();
    });
  }
  let reported = -1;
  const progress = setInterval(() => {
    if (completed === reported) return;
    reported = completed;
    process.stdout.write(`BENCH_PROGRESS ${completed}\n`);
  }, 50);
  process.stdout.write('BENCH_READY\n');
  process.stdin.once('end', () => process.exit(1));
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  process.stdin.setEncoding('utf8').on('data', (d: string) => {
    lines.push(...d.split('\n').filter((l) => l !== ''));
    wake?.();
  });
  const next = async (): Promise<string> => {
    while (lines.length === 0) await new Promise<void>((r) => (wake = r));
    return lines.shift() as string;
  };
  await next();
  for (let done = 0; done < jobs; done += SEND_CHUNK) {
    const n = Math.min(SEND_CHUNK, jobs - done);
    await boss.insert(Array.from({ length: n }, (_, i) => ({ name: QUEUE, data: { i: first + done + i } })));
  }
  process.stdout.write('BENCH_SENT\n');
  while ((await next()) !== 'stop');
  clearInterval(progress);
  process.stdout.write(`BENCH_RESULT ${JSON.stringify({ completed })}\n`);
  // Every job is completed (the parent checked the table): nothing to stop gracefully.
  process.exit(0);
}

const arg = process.argv[2];
if (arg !== undefined && process.argv[1] !== undefined && fs.realpathSync(process.argv[1]) === fs.realpathSync(new URL(import.meta.url)))
  await main(arg);
