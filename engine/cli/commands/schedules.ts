/**
 * Schedules on the command line: `schedules` (the live ones with their next due times) and
 * `schedule pause|resume|trigger <workflow> <id>`, each through the API contract's channels.
 *
 * `schedule trigger` starts an instance now under the schedule's overlap rule (`skip` refuses
 * while its last instance is live, `cancel-previous` cancels that one); it does not run it: a
 * worker (`runnel work`, the app, `runnel serve`) does, as for any started instance.
 */
import type { Command } from 'commander';
import type { ScheduleInfo } from '../../api/contract';
import { withHost } from '../host';
import { common, defaultActor, type CliRun, type CommonOptions } from '../options';
import { json, printable, table, time } from '../output';

/** One line of a schedule for people: workflow, id, cron (zone), paused, next due, last fired. */
function row(s: ScheduleInfo): string[] {
  return [
    printable(s.workflow),
    printable(s.id),
    printable(s.timezone === null ? s.cron : `${s.cron} (${s.timezone})`),
    s.paused ? 'paused' : 'active',
    s.paused ? '-' : time(s.nextDueAt),
    time(s.lastDueAt),
    s.lastInstanceId === null ? '-' : String(s.lastInstanceId),
    `${s.overlap}/${s.catchUp}`,
  ];
}

/** Adds `schedules` and `schedule pause|resume|trigger` to `program`. */
export function addScheduleCommands(program: Command, run: CliRun): void {
  const { io } = run;

  common(
    program
      .command('schedules')
      .description('list the live schedules (the latest versions\' `schedules`) with their next due times, paused flags and last starts')
      .option('--workflow <name>', 'only this workflow\'s schedules'),
  ).action(async (o: CommonOptions & { workflow?: string }) => {
    const list = await withHost(o, io, 'read', ({ call }) => call('schedule:list', o.workflow === undefined ? {} : { workflow: o.workflow }));
    if (o.json) return json(io, list);
    if (list.length === 0) return io.stdout(o.workflow === undefined ? 'no schedules\n' : `workflow ${o.workflow} has no schedules\n`);
    io.stdout(`${table([['WORKFLOW', 'SCHEDULE', 'CRON', 'STATE', 'NEXT DUE (UTC)', 'LAST FIRED (UTC)', 'LAST INSTANCE', 'OVERLAP/CATCH-UP'], ...list.map(row)])}\n`);
  });

  const schedule = program.command('schedule').description('pause, resume or trigger one schedule of a workflow');
  for (const [command, channel, what] of [
    ['pause', 'schedule:pause', 'pause a schedule: it starts nothing until resumed (kept across deploys that keep its id)'],
    ['resume', 'schedule:resume', 'resume a paused schedule from its next due time after now (times passed while paused are not caught up)'],
  ] as const) {
    common(
      schedule
        .command(command)
        .argument('<workflow>', 'workflow name')
        .argument('<id>', 'schedule id')
        .description(what)
        .option('--actor <name>', 'who acts (recorded in history)', defaultActor()),
    ).action(async (workflow: string, id: string, o: CommonOptions & { actor: string }) => {
      const s = await withHost(o, io, 'write', ({ call }) => call(channel, { workflow, id, actor: o.actor }));
      if (o.json) return json(io, s);
      io.stdout(`schedule ${id} of ${workflow}: ${s.paused ? 'paused' : `active, next due ${time(s.nextDueAt)} UTC`}\n`);
    });
  }

  common(
    schedule
      .command('trigger')
      .argument('<workflow>', 'workflow name')
      .argument('<id>', 'schedule id')
      .description('start the schedule\'s instance now (its overlap rule applies; its next due time stays); a worker runs it')
      .option('--actor <name>', 'who starts it (recorded in history)', defaultActor()),
  ).action(async (workflow: string, id: string, o: CommonOptions & { actor: string }) => {
    const { instance } = await withHost(o, io, 'write', ({ call }) => call('schedule:trigger', { workflow, id, actor: o.actor }));
    if (o.json) return json(io, instance);
    io.stdout(`schedule ${id} of ${workflow}: started instance ${instance.id} (${instance.status})\n`);
  });
}
