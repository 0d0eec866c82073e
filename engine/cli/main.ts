/**
 * The `runnel` command line: one host of the engine, like the desktop app and the browser host.
 * Its data operations are calls of the API contract through `dispatch` (engine/cli/host.ts).
 *
 * Every command takes `--db FILE|URL` (a SQLite file or a `postgres://` URL; default `RUNNEL_DB`, else `./runnel.db`), `--json` (machine-readable output on
 * stdout, no progress on stderr) and `--sync full|normal`; exit codes are in
 * engine/cli/exit-codes.ts. Errors print `error: <CODE>: message` on stderr (with `--json`, one JSON
 * line `{"error":{"code","message"}}` there), never a stack trace for user errors. Files are read and checked, flags parsed and `run`'s variables checked before
 * the database is opened, so bad input writes nothing; commands that read (show, list, start,
 * worker, resume, approve, cancel, retry, export, check, backup, metrics) never create a file. A database whose file or
 * directory is not writable (or `--read-only`) is opened read-only: list, show and export work,
 * commands that change it exit 2 with DATABASE_READONLY.
 *
 * Layout: options.ts (common flags, parsing), output.ts (streams, tables, errors), files.ts
 * (input and output files), host.ts (the engine, dispatch, working), report.ts (instance
 * reports), commands/*.ts (one file per group of commands).
 */
import { Command, CommanderError } from 'commander';
import { addActionCommands } from './commands/actions';
import { addChangeCommands } from './commands/changes';
import { addScheduleCommands } from './commands/schedules';
import { addCopyCommand } from './commands/copy';
import { addDatabaseCommands } from './commands/database';
import { addInstanceCommands } from './commands/instances';
import { addMaintenanceCommands } from './commands/maintenance';
import { addRetentionCommands } from './commands/retention';
import { addServeCommands } from './commands/serve';
import { addWorkCommands } from './commands/work';
import { addWorkflowCommands } from './commands/workflows';
import { ExitCode } from './exit-codes';
import { commonOptionsLast, type CliRun } from './options';
import { guardStream, jsonLine, processIo, reportError, type CliIo } from './output';

export { ExitCode, exitCodeForStatus } from './exit-codes';
export type { CliIo } from './output';
export type { CliRun } from './options';

/**
 * Builds the `runnel` program. Actions set `run.exitCode`; errors propagate to the caller
 * (see {@link main}), so tests can drive it in-process.
 */
export function buildProgram(run: CliRun): Command {
  const { io } = run;
  const program = new Command('runnel')
    .description('Runnel: a durable workflow engine whose whole runtime is one SQLite file')
    .version('0.1.0', '-V, --version', 'print the version of runnel')
    .enablePositionalOptions()
    .showHelpAfterError(run.json ? false : '(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
      // Usage errors (an unknown command or option, a missing argument) as the API's errors are, with --json.
      outputError: (s, write) =>
        write(run.json ? `${jsonLine({ error: { code: 'BAD_REQUEST', message: s.replace(/^error: /, '').trimEnd() } })}\n` : s),
    })
    .exitOverride();
  addDatabaseCommands(program, run);
  addCopyCommand(program, run);
  addWorkflowCommands(program, run);
  addInstanceCommands(program, run);
  addWorkCommands(program, run);
  addActionCommands(program, run);
  addServeCommands(program, run);
  addMaintenanceCommands(program, run);
  addRetentionCommands(program, run);
  addChangeCommands(program, run);
  addScheduleCommands(program, run);
  return program;
}

/** Whether the command line asks for `--json` (before a `--` that ends the options). */
function wantsJson(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).includes('--json');
}

/**
 * Runs the CLI on `argv` (process.argv-shaped: node, script, args…) and returns the exit code.
 * Never throws; never calls process.exit. SIGINT / SIGTERM stop long commands cleanly (130);
 * a second signal exits at once.
 */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const controller = new AbortController();
  const run: CliRun = { io, exitCode: ExitCode.OK, signal: controller.signal, json: wantsJson(argv.slice(2)) };
  // Console output (the worker's own warnings) goes to these streams too.
  if (io === processIo) {
    guardStream(process.stdout);
    guardStream(process.stderr);
  }
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(ExitCode.INTERRUPTED);
    io.stderr('\nstopping… (again to quit at once)\n');
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await buildProgram(run).parseAsync([...argv.slice(0, 2), ...commonOptionsLast(argv.slice(2))], { from: 'node' });
    return run.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE;
    return reportError(err, io, run.json);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
