/**
 * The rows and targets of the PostgreSQL section (bench/postgres-bench.ts), in the table of
 * bench/report.ts, and the report of a run of that section alone (`npm run bench -- --pg-only`).
 *
 * Targets (issue 11), each a ratio within the run: the engine ≥ 0.5× the raw PostgreSQL
 * group-commit baseline (32 steps a transaction) with as many processes; the engine's
 * transitions/s ≥ 3× pg-boss's jobs/s (one transition per job) with as many processes; 4 engine
 * processes never below 1.0× of one.
 */
import type { BossRun, EnginePgRun, PgSection, RawPgRun } from './postgres-bench';
import type { Row, Target } from './report';
import { renderTable } from './report';

/** Records a target and returns its verdict cell ('PASS', 'MISS' or 'n/a'), as report.ts's. */
export type TargetFn = (name: string, value: string, limit: string, pass: boolean | undefined) => string;

const num = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const x = (n: number) => `${n.toFixed(2)}×`;
const procs = (p: number) => `${p} process${p > 1 ? 'es' : ''}`;

/** Raw round trips per transaction: BEGIN, the claim, the write-back with its history rows, COMMIT. */
const RAW_ROUND_TRIPS = 4;

/**
 * The section's rows (`n` is its number in the table) and notes; every target is recorded
 * through `target`. A skipped section is one row saying why.
 */
export function evaluatePostgres(pg: PgSection, target: TargetFn, n: number): { sections: [string, Row[]][]; notes: string[] } {
  if ('skipped' in pg) {
    const result = target('PostgreSQL: engine vs raw group commit, vs pg-boss, 4 processes vs 1', 'skipped', '0.50×, 3.00×, 1.00×', undefined);
    return {
      sections: [[`${n}. PostgreSQL`, [{ what: 'PostgreSQL rows', value: 'skipped', ratio: pg.skipped, target: 'issue 11', result }]]],
      notes: [],
    };
  }
  const notes = pg.failures.map((f) => `PostgreSQL row failed: ${f}`);
  const s = pg.server;
  const rawOf = (k: number, p: number): RawPgRun | undefined => pg.raw.find((r) => r.k === k && r.processes === p);
  const bossOf = (p: number): BossRun | undefined => pg.boss.find((b) => b.processes === p);
  const engineOf = (p: number): EnginePgRun | undefined => pg.engine.find((e) => e.processes === p);
  const rows: Row[] = [];
  for (const p of [1, 4]) {
    for (const k of [1, 32]) {
      const r = rawOf(k, p);
      if (!r) continue;
      const one = rawOf(k, 1);
      rows.push({
        what: `raw PostgreSQL, ${k === 1 ? '1 step' : `${k} steps`}/transaction, ${procs(p)} (${num(r.population)} rows cycling)`,
        value: `${num(r.stepsPerSec)} steps/s`,
        ratio: p > 1 && one ? `${x(r.stepsPerSec / one.stepsPerSec)} of 1; txn P99 ${ms(r.txn.p99)} ms` : `txn P99 ${ms(r.txn.p99)} ms`,
      });
    }
  }
  for (const p of [1, 4]) {
    const b = bossOf(p);
    if (!b) continue;
    const one = bossOf(1);
    rows.push({
      what: `pg-boss 10.4, ${num(b.jobs)} jobs of one transition, ${procs(p)} (${b.workersPerProcess} work() loops × ${b.batchSize} jobs each)`,
      value: `${num(b.jobsPerSec)} jobs/s`,
      ratio: p > 1 && one ? `${x(b.jobsPerSec / one.jobsPerSec)} of 1` : 'first send → last completion',
    });
  }
  for (const p of [1, 4]) {
    const e = engineOf(p);
    if (!e) {
      rows.push({ what: `engine on PostgreSQL, ${procs(p)}`, value: 'not measured', target: '≥ 0.50× raw gc', result: target(`PostgreSQL: engine ≥ 0.5× raw group commit, ${procs(p)}`, 'n/a', '0.50×', undefined) });
      continue;
    }
    const gc = rawOf(32, p);
    const gcRatio = gc ? e.transitionsPerSec / gc.stepsPerSec : undefined;
    rows.push({
      what: `engine on PostgreSQL, ${num(e.instances)} × 3-node linear, ${procs(p)}`,
      value: `${num(e.transitionsPerSec)} trans/s`,
      ratio: gcRatio === undefined ? 'no raw figure' : `${x(gcRatio)} raw gc`,
      target: '≥ 0.50× raw gc',
      result: target(`PostgreSQL: engine ≥ 0.5× raw group commit, ${procs(p)}`, gcRatio === undefined ? 'n/a' : x(gcRatio), '0.50×', gcRatio === undefined ? undefined : gcRatio >= 0.5),
    });
    const b = bossOf(p);
    const bossRatio = b ? e.transitionsPerSec / b.jobsPerSec : undefined;
    rows.push({
      what: `  engine on PostgreSQL vs pg-boss, ${procs(p)}`,
      value: b ? `${num(e.transitionsPerSec)} vs ${num(b.jobsPerSec)}/s` : 'no pg-boss figure',
      ratio: bossRatio === undefined ? '' : `${x(bossRatio)} pg-boss`,
      target: '≥ 3.00× pg-boss',
      result: target(`PostgreSQL: engine transitions/s ≥ 3× pg-boss jobs/s, ${procs(p)}`, bossRatio === undefined ? 'n/a' : x(bossRatio), '3.00×', bossRatio === undefined ? undefined : bossRatio >= 3),
    });
  }
  const one = engineOf(1);
  const four = engineOf(4);
  const scale = one && four ? four.transitionsPerSec / one.transitionsPerSec : undefined;
  rows.push({
    what: '  engine on PostgreSQL, 4 processes vs 1',
    value: scale === undefined ? 'n/a' : x(scale),
    target: '≥ 1.00× of 1',
    result: target('PostgreSQL: 4 engine processes never below 1.0× of one', scale === undefined ? 'n/a' : x(scale), '1.00×', scale === undefined ? undefined : scale >= 1),
  });
  for (const e of [one, four]) {
    if (!e) continue;
    rows.push({
      what: `  engine on PostgreSQL, write path per transition (${procs(e.processes)})`,
      value: `${e.roundTripsPerTransition.toFixed(2)} statements (+ ${(e.readsPerTransition ?? 0).toFixed(2)} reads) in ${(e.hopsPerTransition ?? 0).toFixed(2)} thread hops, pipelined (about a round trip to the server each); ${e.transactionsPerTransition.toFixed(3)} transactions, ${(e.rollbacksPerTransition ?? 0).toFixed(3)} rolled back`,
      ratio: `raw gc: ${(RAW_ROUND_TRIPS / 32).toFixed(3)} round trips`,
    });
    rows.push({
      what: `  engine on PostgreSQL, time per transition (${procs(e.processes)})`,
      value: `${num(e.bridgeUsPerTransition)} µs waiting on the bridge, ${num(e.cpuUsPerTransition)} µs CPU`,
      ratio: `${num((1e6 * e.processes) / e.transitionsPerSec)} µs wall per process`,
    });
  }
  const remote = pg.remote;
  if (remote && (remote.engine || remote.boss)) {
    const rt = `${2 * remote.delayMs} ms a round trip: a proxy adds ${remote.delayMs} ms each way`;
    if (remote.boss) rows.push({ what: `pg-boss 10.4 across the network (${rt}), ${num(remote.boss.jobs)} jobs, 1 process`, value: `${num(remote.boss.jobsPerSec)} jobs/s` });
    const re = remote.engine;
    if (re) {
      rows.push({
        what: `engine on PostgreSQL across the network (${rt}), ${num(re.instances)} × 3-node linear, 1 process`,
        value: `${num(re.transitionsPerSec)} trans/s`,
        ratio: `${one ? `${x(re.transitionsPerSec / one.transitionsPerSec)} of local` : ''}${remote.boss ? `${one ? '; ' : ''}${x(re.transitionsPerSec / remote.boss.jobsPerSec)} pg-boss` : ''}`,
      });
      rows.push({
        what: `  its write path per transition`,
        value: `${(re.hopsPerTransition ?? 0).toFixed(2)} hops, ${num(re.bridgeUsPerTransition)} µs waiting on the bridge, ${num(re.cpuUsPerTransition)} µs CPU`,
      });
    }
  }
  if (one) {
    const most = one.top.slice(0, 4).map((t) => `${t.sql.slice(0, 40)}… ${t.perTransition.toFixed(2)}`);
    notes.push(`engine on PostgreSQL, 1 process: the statements sent most often, per transition: ${most.join('; ')} (all, with the time blocked, in the results JSON)`);
  }
  const title = `${n}. PostgreSQL ${s.server_version ?? ''} (${pg.owned ? 'a cluster the bench started' : 'RUNNEL_BENCH_PG_URL'}; fsync=${s.fsync}, synchronous_commit=${s.synchronous_commit}, full_page_writes=${s.full_page_writes})${pg.config.repeats > 1 ? ` (best of ${pg.config.repeats} runs)` : ''}`;
  return { sections: [[title, rows]], notes };
}

/** The report of the PostgreSQL section run alone: its table, the targets' count, the notes. */
export function formatPostgresReport(pg: PgSection, head: string[]): { text: string; targets: Target[] } {
  const targets: Target[] = [];
  const target: TargetFn = (name, value, limit, pass) => {
    targets.push({ name, value, limit, pass });
    return pass === undefined ? 'n/a' : pass ? 'PASS' : 'MISS';
  };
  const { sections, notes } = evaluatePostgres(pg, target, 1);
  return { text: renderTable(head, sections, targets, notes), targets };
}
