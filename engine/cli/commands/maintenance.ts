/**
 * Commands that look after the file itself: `check` (SQLite's integrity check and the engine's
 * invariants), `backup <dest>` (a consistent copy while workers run), `vacuum` (auto_vacuum =
 * INCREMENTAL for a file made before it was the default) and `metrics` (the
 * Prometheus text the browser host serves at `GET /metrics`).
 */
import type { Command } from 'commander';
import { EngineMetrics } from '../../api';
import { backupDatabase } from '../../db/backup';
import { checkDatabase } from '../../db/check';
import { vacuumDatabase } from '../../db/vacuum';
import { databaseError } from '../../db/damage';
import { probeDatabase } from '../../db/open-database';
import { isPostgresUrl, sqliteOnlyError } from '../../db/postgres/errors';
import { EngineError } from '../../errors';
import { ExitCode } from '../exit-codes';
import { withHost } from '../host';
import { common, type CliRun, type CommonOptions } from '../options';
import { json, plural, Progress, shellQuote } from '../output';

const mib = (b: number) => `${(b / (1024 * 1024)).toFixed(1)} MiB`;

/**
 * `check` and `backup` work on a SQLite file; a PostgreSQL database is looked after by the
 * server's own tools.
 *
 * @throws EngineError INVALID_INPUT naming them, for a `postgres://` location.
 */
function sqliteOnly(command: 'backup' | 'check' | 'vacuum', db: string): void {
  if (isPostgresUrl(db)) throw sqliteOnlyError(command, db, { flag: '--db' });
}

/** Adds `check`, `backup`, `vacuum` and `metrics` to `program`. */
export function addMaintenanceCommands(program: Command, run: CliRun): void {
  const { io } = run;

  common(
    program
      .command('check')
      .description("check the file: SQLite's integrity_check and the engine's own invariants; exits 1 naming each violation"),
  ).action(async (o: CommonOptions) => {
    sqliteOnly('check', o.db);
    const { file } = probeDatabase(o.db, { mustExist: true });
    let report;
    try {
      report = checkDatabase(file);
    } catch (err) {
      throw databaseError(err, file)?.error ?? err;
    }
    if (o.json) json(io, report);
    else {
      for (const v of report.violations) io.stdout(`${v.kind}: ${v.message}\n`);
      const c = report.counts;
      const seen = `${plural(c.instances, 'instance')} (${c.live} live${c.suspended > 0 ? `, ${c.suspended} SUSPENDED` : ''}), ${plural(c.schedule, 'schedule row')}, ${plural(c.history, 'history row')}, WAL ${mib(c.walBytes)}`;
      io.stdout(
        report.ok
          ? `${file}: ok — ${seen} (${report.elapsedMs} ms)\n`
          : `${file}: ${report.violations.length} violation${report.violations.length === 1 ? '' : 's'} — ${seen}\n`,
      );
      if (report.ok && report.damageMarker) io.stderr(`the file passes; it was found damaged before: once you trust it, delete ${report.damageMarker}\n`);
      if (!report.ok && report.damageMarker && report.violations.some((v) => v.kind === 'INTEGRITY')) {
        io.stderr(`the damage is recorded in ${report.damageMarker}: no Runnel process writes to the file until it is deleted (once the file is sound or restored)\n`);
      }
      if (!report.ok) io.stderr(`keep the file as it is, take a copy with: npx runnel backup <dest> --db ${shellQuote(file)}; then restore a backup or repair what is named\n`);
    }
    run.exitCode = report.ok ? ExitCode.OK : ExitCode.FAILED;
    await Promise.resolve();
  });

  common(
    program
      .command('backup')
      .argument('<dest>', 'the file to write the copy to')
      .description('write a consistent copy of the database while workers run (VACUUM INTO a new file, then fsync and rename)')
      .option('--force', 'replace <dest> if it exists'),
  ).action(async (dest: string, o: CommonOptions & { force?: boolean }) => {
    sqliteOnly('backup', o.db);
    const { file } = probeDatabase(o.db, { mustExist: true });
    const progress = new Progress(io, !o.json, 4);
    const r = await backupDatabase(file, dest, {
      force: o.force === true,
      onProgress: (p) => progress.line(`backup: ${mib(p.bytesWritten)} of about ${mib(p.bytesTotal)} written`),
    });
    if (o.json) json(io, r);
    else io.stdout(`backed up ${r.source} to ${r.dest}: ${mib(r.bytes)} in ${(r.elapsedMs / 1000).toFixed(1)} s (check it with: npx runnel check --db ${shellQuote(r.dest)})\n`);
  });

  common(
    program
      .command('vacuum')
      .description(
        'convert the file to auto_vacuum=INCREMENTAL once (files made by this version have it), so retention shrinks it as it deletes; refused while another process has the file open',
      ),
  ).action(async (o: CommonOptions) => {
    sqliteOnly('vacuum', o.db);
    const { file } = probeDatabase(o.db, { mustExist: true });
    if (o.readOnly === true) {
      throw new EngineError('DATABASE_READONLY', `vacuum rewrites ${file}, and --read-only forbids changing it: run it without --read-only`, { kind: 'user', retryable: false, details: { flag: '--read-only' } });
    }
    const progress = new Progress(io, !o.json, 4);
    const r = await vacuumDatabase(file, {
      onProgress: (p) => progress.line(`vacuum: ${mib(p.bytesWritten)} of about ${mib(p.bytesTotal)} rewritten`),
    });
    if (o.json) json(io, r);
    else
      io.stdout(
        `${r.file}: ${r.converted ? 'converted to auto_vacuum=INCREMENTAL' : 'auto_vacuum=INCREMENTAL already; free pages given back'}: ${mib(r.bytesBefore)} → ${mib(r.bytesAfter)} in ${(r.elapsedMs / 1000).toFixed(1)} s\n`,
      );
  });

  common(
    program
      .command('metrics')
      .description(
        'print the Prometheus metrics of the database (the text GET /metrics serves; counters of this process start at zero); with --json, the same as prom-client\'s JSON: [{ name, help, type, values: [{ labels, value }] }]',
      ),
  ).action(async (o: CommonOptions) => {
    await withHost(o, io, 'read', async ({ engine }) => {
      const metrics = new EngineMetrics(engine);
      try {
        if (o.json) json(io, await metrics.registry.getMetricsAsJSON());
        else io.stdout(await metrics.text());
      } finally {
        metrics.close();
      }
    });
  });
}
