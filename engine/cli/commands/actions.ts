/**
 * The manual actions on an instance: `resume`, `approve`, `signal`, `cancel` and `retry`. Each is
 * one contract call (`instance:resume`, `instance:approve`, `instance:signal`, `instance:cancel`,
 * `instance:retry`) with the actor recorded in history; `--wait` then works the instance until it
 * settles.
 */
import { Option, type Command } from 'commander';
import { withHost } from '../host';
import { common, defaultActor, instanceIdArg, parseJsonFlag, parseVariables, usage, type CliRun, type CommonOptions } from '../options';
import { carriesOn, notTakenText, reportAfterAction } from '../report';
import { jsonLine } from '../output';

const WAIT_HELP = 'work the instance until it ends or needs a person; exit code by its status';

/** Adds `resume`, `approve`, `signal`, `pause`, `unpause`, `cancel` and `retry` to `program`. */
export function addActionCommands(program: Command, run: CliRun): void {
  const { io } = run;

  common(
    program
      .command('resume')
      .argument('<id>', 'instance id', instanceIdArg)
      .description('resume a SUSPENDED instance: retry the failed step, skip it with a result, or fail')
      .addOption(new Option('--action <action>', 'what to do').choices(['retry', 'skip', 'fail']).makeOptionMandatory())
      .option('--result <json>', "for skip: the failed step's result (JSON)")
      .option(
        '--vars <json>',
        "variables that REPLACE the instance's variables first (a JSON object): a variable not given, node outputs included, is removed; the diff lands in history",
      )
      .option('--vars-file <file>', 'the replacing variables from a JSON file (--vars keys win over its keys)')
      .option('--actor <name>', 'who acts (recorded in history)', defaultActor())
      .option('--wait', WAIT_HELP),
  ).action(
    async (
      id: number,
      o: CommonOptions & { action: 'retry' | 'skip' | 'fail'; result?: string; vars?: string; varsFile?: string; actor: string; wait?: boolean },
    ) => {
      const variables = await parseVariables(o);
      const result = o.result === undefined ? undefined : parseJsonFlag('--result', o.result);
      if (result !== undefined && o.action !== 'skip') throw usage('--result is only for --action skip', { flag: '--result' });
      await withHost(o, io, 'write', async ({ engine, call }) => {
        await call('instance:resume', { id, action: o.action, result, variables, actor: o.actor });
        await reportAfterAction(engine, call, id, o, run, (status) =>
          `instance ${id}: ${o.action} recorded; now ${status}${carriesOn(status)}`,
        );
      });
    },
  );

  common(
    program
      .command('approve')
      .argument('<id>', 'instance id', instanceIdArg)
      .argument('<node>', 'the approval node id')
      .description('decide an approval an instance waits for')
      .option('--approve', 'approve')
      .option('--reject', 'reject')
      .option('--data <json>', 'data attached to the decision (JSON)')
      .option('--comment <text>', 'a comment kept with the decision')
      .option('--actor <name>', 'who decides (recorded in history)', defaultActor())
      .option('--wait', WAIT_HELP),
  ).action(
    async (
      id: number,
      node: string,
      o: CommonOptions & { approve?: boolean; reject?: boolean; data?: string; comment?: string; actor: string; wait?: boolean },
    ) => {
      if (Boolean(o.approve) === Boolean(o.reject)) throw usage('give exactly one of --approve or --reject');
      const data = o.data === undefined ? undefined : parseJsonFlag('--data', o.data);
      await withHost(o, io, 'write', async ({ engine, call }) => {
        await call('instance:approve', { id, nodeId: node, approved: o.approve === true, data, comment: o.comment, actor: o.actor });
        await reportAfterAction(engine, call, id, o, run, (status) =>
          `instance ${id}: "${node}" ${o.approve ? 'approved' : 'rejected'}; now ${status}${carriesOn(status)}`,
        );
      });
    },
  );

  common(
    program
      .command('signal')
      .argument('[id]', 'instance id (or give --business-key)')
      .argument('[event]', 'the event name (what an event node waits for)')
      .description('send an event to a live instance: the event node waiting for it takes it, or it is kept until one does')
      .option('--business-key <key>', 'the instance by its business key (exactly one live instance must have it)')
      .option('--key <key>', "the event's key (what an event node's config.key asks for)")
      .option('--data <json>', "the event's data (JSON): the waiting node's result")
      .option('--actor <name>', 'who sends it (recorded in history)', defaultActor())
      .option('--wait', WAIT_HELP),
  ).action(
    async (
      idOrEvent: string | undefined,
      eventArg: string | undefined,
      o: CommonOptions & { businessKey?: string; key?: string; data?: string; actor: string; wait?: boolean },
    ) => {
      // `runnel signal --business-key B <event>` has one positional argument: the event.
      const byKey = o.businessKey !== undefined;
      let id: number | undefined;
      if (!byKey && idOrEvent !== undefined) {
        try {
          id = instanceIdArg(idOrEvent);
        } catch (err) {
          throw usage((err as Error).message);
        }
      }
      const event = byKey && eventArg === undefined ? idOrEvent : eventArg;
      if (byKey && eventArg !== undefined) throw usage('give the instance id or --business-key, not both', { flag: '--business-key' });
      if (id === undefined && !byKey) throw usage('give the instance id or --business-key');
      if (event === undefined || event === '') throw usage('give the event name');
      const data = o.data === undefined ? undefined : parseJsonFlag('--data', o.data);
      await withHost(o, io, 'write', async ({ engine, call }) => {
        const r = await call('instance:signal', { ...(id === undefined ? { businessKey: o.businessKey } : { id }), event, key: o.key, data, actor: o.actor });
        const target = r.instance.id;
        const outcome = r.consumedBy === null ? notTakenText(await call('instance:get', { id: target }), event, o.key) : `taken by "${r.consumedBy}"`;
        await reportAfterAction(engine, call, target, o, run, (status) => `instance ${target}: event "${event}" ${outcome}; now ${status}${r.consumedBy === null ? '' : carriesOn(status)}`);
      });
    },
  );

  for (const [command, channel, what] of [
    ['pause', 'instance:pause', 'pause a live instance: it starts no node until unpaused; running steps finish; timers, retries, timeouts and its deadline keep the time they had left'],
    ['unpause', 'instance:unpause', 'unpause an instance: what its pause held is due again after the time it had left'],
  ] as const) {
    common(
      program
        .command(command)
        .argument('<id>', 'instance id', instanceIdArg)
        .description(what)
        .option('--actor <name>', 'who acts (recorded in history)', defaultActor()),
    ).action(async (id: number, o: CommonOptions & { actor: string }) => {
      await withHost(o, io, 'write', async ({ call }) => {
        const r = await call(channel, { id, actor: o.actor });
        if (o.json) io.stdout(`${jsonLine({ ...r, paused: command === 'pause' })}\n`);
        else io.stdout(`instance ${id}: ${command === 'pause' ? 'paused' : 'unpaused'} (${r.status})\n`);
      });
    });
  }

  common(
    program
      .command('cancel')
      .argument('<id>', 'instance id', instanceIdArg)
      .description('cancel a live instance')
      .option('--compensate', 'run the compensations of completed steps first')
      .option('--actor <name>', 'who cancels (recorded in history)', defaultActor())
      .option('--wait', 'with --compensate: work the compensations until the instance ends'),
  ).action(async (id: number, o: CommonOptions & { compensate?: boolean; actor: string; wait?: boolean }) => {
    await withHost(o, io, 'write', async ({ engine, call }) => {
      await call('instance:cancel', { id, compensate: o.compensate === true, actor: o.actor });
      await reportAfterAction(engine, call, id, o, run, (status) =>
        `instance ${id}: ${status}${status === 'COMPENSATING' ? ' (compensations run when a worker runs: npx runnel worker, or pass --wait)' : ''}`,
      );
    });
  });

  common(
    program
      .command('retry')
      .argument('<id>', 'instance id', instanceIdArg)
      .description('retry a FAILED instance from its failed steps (a fresh attempt budget each)')
      .option('--actor <name>', 'who retries (recorded in history)', defaultActor())
      .option('--wait', WAIT_HELP),
  ).action(async (id: number, o: CommonOptions & { actor: string; wait?: boolean }) => {
    await withHost(o, io, 'write', async ({ engine, call }) => {
      await call('instance:retry', { id, actor: o.actor });
      await reportAfterAction(engine, call, id, o, run, (status) =>
        `instance ${id}: retry recorded; now ${status}${carriesOn(status)}`,
      );
    });
  });
}
