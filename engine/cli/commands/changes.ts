/**
 * The change feed on the command line: `changes` (JSON Lines, optionally followed and acknowledged
 * by a named consumer) and `consumers` (the registered consumers; `--forget` one).
 *
 * Delivery (engine/runtime/change-feed.ts): every line carries its entry's `cursor`. With
 * `--consumer`, a line is printed first and acknowledged after, one at a time, so a process killed
 * between the two prints that one line again when restarted (same cursor) and never skips one: a
 * reader that keeps the last cursor it stored drops lines at or below it, and has each entry once.
 * `--since` wins over the consumer's stored cursor (the reader's own record of where it is).
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { ChangeEntry } from '../../api/contract';
import { EngineError } from '../../errors';
import { Faults } from '../../api';
import { ExitCode } from '../exit-codes';
import { withHost, type Call } from '../host';
import { common, positiveInt, type CliRun, type CommonOptions } from '../options';
import { json, jsonLine, printable, table, time } from '../output';

/** Entries asked for per read. */
const PAGE = 1000;

/** A commander parser of a feed cursor: a history id, 0 or more. */
function cursorArg(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError(`--since must be a cursor: 0 or a history id (got "${value}")`);
  }
  return Number(value);
}

/** Resolves after `ms`, at the next commit of another connection, or when `signal` aborts, whichever comes first. */
function nextChange(watch: (onChange: () => void) => () => void, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stop();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const stop = watch(done);
    signal.addEventListener('abort', done, { once: true });
  });
}

interface ChangesOptions extends CommonOptions {
  since?: number;
  follow?: boolean;
  workflow?: string;
  consumer?: string;
  limit?: number;
  poll: number;
}

/** Prints the feed as {@link ChangesOptions} ask; answers whether it was interrupted. */
async function printChanges(call: Call, o: ChangesOptions, run: CliRun, watch: (onChange: () => void) => () => void): Promise<boolean> {
  // Fault points are for tests: armed only with RUNNEL_ENABLE_FAULTS=1 (engine/runtime/faults.ts).
  const faults = Faults.fromEnv(process.env.RUNNEL_ENABLE_FAULTS === '1' ? process.env.RUNNEL_FAULTS : undefined);
  const { consumer } = o;
  let after = o.since;
  // What the consumer has acknowledged already: acknowledging it again would be a write for nothing.
  let acked = consumer === undefined ? -1 : ((await call('changes:consumers', {})).consumers.find((c) => c.name === consumer)?.cursor ?? -1);
  let printed = 0;
  const ack = async (cursor: number): Promise<void> => {
    if (consumer === undefined || cursor <= acked) return;
    acked = (await call('changes:ack', { consumer, cursor })).cursor;
  };
  const where = (e: ChangeEntry) => ({ instanceId: e.instanceId ?? 0, nodeId: e.nodeId });
  for (;;) {
    if (run.signal.aborted) return true;
    const want = o.follow || o.limit === undefined ? PAGE : Math.min(PAGE, o.limit - printed);
    let page: { entries: ChangeEntry[]; cursor: number };
    try {
      page = await call('changes:read', { after, limit: want, workflow: o.workflow, consumer });
    } catch (err) {
      // PostgreSQL: long write transactions held the feed's lock; a follower reads again later.
      if (!(o.follow && err instanceof EngineError && err.code === 'DATABASE_BUSY')) throw err;
      await nextChange(watch, o.poll, run.signal);
      continue;
    }
    for (const e of page.entries) {
      // One line per entry, whatever the text holds (U+2028 and U+2029 escaped: a line reader splits there).
      run.io.stdout(`${jsonLine(e)}\n`);
      printed++;
      if (faults.armed) faults.hit('change-printed', where(e));
      await ack(e.cursor);
      if (faults.armed && consumer !== undefined) faults.hit('change-acked', where(e));
    }
    // Past entries of other workflows too (a filtered read): the consumer has read through there.
    await ack(page.cursor);
    after = page.cursor;
    if (page.entries.length === want && (o.follow || o.limit === undefined || printed < o.limit)) continue;
    if (!o.follow) return false;
    await nextChange(watch, o.poll, run.signal);
  }
}

/** Adds `changes` and `consumers` to `program`. */
export function addChangeCommands(program: Command, run: CliRun): void {
  const { io } = run;

  common(
    program
      .command('changes')
      .description('print the change feed, every committed history event oldest first, as JSON Lines (each with its cursor)')
      .option('--since <cursor>', "only entries after this cursor (default: the consumer's cursor, else from the start)", cursorArg)
      .option('--follow', 'keep printing entries as they commit (until Ctrl-C)')
      .option('--workflow <name>', 'only entries of instances of this workflow (any version)')
      .option('--consumer <name>', 'a named consumer: resume after its cursor and acknowledge each line once printed')
      .option('--limit <n>', 'without --follow: at most this many entries', positiveInt('--limit'))
      .option('--poll <ms>', 'with --follow: look for new entries at least this often, ms', positiveInt('--poll'), 200),
  ).action(async (o: ChangesOptions) => {
    await withHost(o, io, o.consumer === undefined ? 'read' : 'write', async ({ engine, call }) => {
      const interrupted = await printChanges(call, o, run, (onChange) => engine.storage.watchChanges(onChange, o.poll));
      run.exitCode = interrupted ? ExitCode.INTERRUPTED : ExitCode.OK;
    });
  });

  common(
    program
      .command('consumers')
      .description('list the change feed\'s named consumers, with their cursors and how far behind the feed they are')
      .option('--forget <name>', 'unregister this consumer (retention stops keeping entries for it)'),
  ).action(async (o: CommonOptions & { forget?: string }) => {
    const forget = o.forget;
    if (forget !== undefined) {
      await withHost(o, io, 'write', ({ call }) => call('changes:forget', { consumer: forget }));
      if (o.json) json(io, { forgotten: forget });
      else io.stdout(`consumer ${forget} forgotten\n`);
      return;
    }
    const { consumers, head } = await withHost(o, io, 'read', ({ call }) => call('changes:consumers', {}));
    if (o.json) return json(io, { head, consumers: consumers.map((c) => ({ ...c, behind: Math.max(0, head - c.cursor) })) });
    if (consumers.length === 0) return io.stdout(`no consumers (the feed's head is ${head})\n`);
    const rows = consumers.map((c) => [printable(c.name), String(c.cursor), String(Math.max(0, head - c.cursor)), time(c.updatedAt)]);
    io.stdout(`${table([['NAME', 'CURSOR', 'BEHIND', 'ACKNOWLEDGED'], ...rows])}\nhead ${head}\n`);
  });
}
