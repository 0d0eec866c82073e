/** Instance commands that start and read: `start`, `list` and `show`. */
import type { Command } from 'commander';
import { INSTANCE_STATUSES, PRIORITY_RANGE } from '../../vocabulary';
import type { HistoryEvent, InstanceDetail } from '../../api/contract';
import { withHost, type Call } from '../host';
import { common, defaultActor, instanceIdArg, parseVariables, shownDb, positiveInt, integerIn, usage, type CliRun, type CommonOptions } from '../options';
import { errorText, json, printable, short, table, time } from '../output';
import { describeInstance, waitAndReport } from '../report';

/** Every history event of instance `id`, oldest first (all pages of `instance:history`). */
async function fullHistory(call: Call, id: number): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  for (let afterId: number | null = 0; afterId !== null; ) {
    const page: { events: HistoryEvent[]; nextAfterId: number | null } = await call('instance:history', { id, afterId, limit: 10_000 });
    events.push(...page.events);
    afterId = page.nextAfterId;
  }
  return events;
}

/**
 * An instance as `show --at` prints it: the rebuilt state without `version`. Time travel records
 * no version per history entry (engine/runtime/time-travel.ts gives today's), so printed beside
 * the past state it would read as the version at that entry.
 */
function pastState(inst: InstanceDetail): Omit<InstanceDetail, 'version'> {
  const { version: _now, ...then } = inst;
  return then;
}

/** Adds `start`, `list` and `show` to `program`. */
export function addInstanceCommands(program: Command, run: CliRun): void {
  const { io } = run;

  common(
    program
      .command('start')
      .argument('<workflow>', 'workflow name')
      .description('start an instance of a deployed workflow')
      .option('--version <n>', 'workflow version (default: the latest)', positiveInt('--version'))
      .option('--vars <json>', 'initial variables, a JSON object')
      .option('--vars-file <file>', 'initial variables from a JSON file (--vars keys win)')
      .option('--business-key <key>', 'a key of your own to find the instance by')
      .option(
        '--priority <n>',
        `higher first when workers claim work (an integer, ${PRIORITY_RANGE.min} to ${PRIORITY_RANGE.max}; default: the workflow's, else 0)`,
        integerIn('--priority', PRIORITY_RANGE.min, PRIORITY_RANGE.max),
      )
      .option('--actor <name>', 'who starts it', defaultActor())
      .option('--wait', 'work the instance until it ends or needs a person; exit code by its status'),
  ).action(
    async (
      name: string,
      o: CommonOptions & { version?: number; vars?: string; varsFile?: string; businessKey?: string; priority?: number; actor: string; wait?: boolean },
    ) => {
      const variables = await parseVariables(o);
      await withHost(o, io, 'write', async ({ engine, call }) => {
        const { id } = await call('instance:start', {
          workflow: name,
          version: o.version,
          variables,
          businessKey: o.businessKey,
          priority: o.priority,
          actor: o.actor,
        });
        if (o.wait) run.exitCode = await waitAndReport(engine, call, id, o, run);
        else if (o.json) json(io, { id });
        else io.stdout(`started instance ${id} of ${name}\n`);
      });
    },
  );

  common(
    program
      .command('list')
      .description('list instances, newest first')
      .option('--status <statuses>', `comma-separated statuses (${INSTANCE_STATUSES.join(', ')})`)
      .option('--workflow <name>', 'only instances of this workflow')
      .option('--parent <id>', 'only the child instances of this instance (its subworkflow and map nodes)', positiveInt('--parent'))
      .option('--limit <n>', 'at most this many (1–1000)', positiveInt('--limit'), 50)
      .option('--before <id>', 'only instances with a smaller id (paging)', positiveInt('--before'))
      .option('--test', 'only test runs (runnel run --test), which the list leaves out otherwise'),
  ).action(async (o: CommonOptions & { status?: string; workflow?: string; parent?: number; limit: number; before?: number; test?: boolean }) => {
    const status = o.status
      ?.split(',')
      .map((s) => s.trim().toUpperCase())
      .filter((s) => s !== '');
    const known = (s: string): s is (typeof INSTANCE_STATUSES)[number] => (INSTANCE_STATUSES as readonly string[]).includes(s);
    const bad = status?.filter((s) => !known(s)) ?? [];
    if (bad.length > 0)
      throw usage(`--status: unknown status ${bad.join(', ')} (one of ${INSTANCE_STATUSES.join(', ')})`, { flag: '--status' });
    if (o.limit > 1000) throw usage(`--limit must be at most 1000 (got ${o.limit})`, { flag: '--limit' });
    const { items } = await withHost(o, io, 'read', ({ call }) =>
      call('instance:list', { status: status?.filter(known), workflow: o.workflow, parentId: o.parent, limit: o.limit, beforeId: o.before, withCounts: false, ...(o.test === true ? { test: true } : {}) }),
    );
    if (o.json) return json(io, items);
    if (items.length === 0) return io.stdout(o.test === true ? 'no test runs\n' : 'no instances\n');
    const now = Date.now();
    io.stdout(
      `${table([
        ['ID', 'WORKFLOW', 'STATUS', 'CREATED', 'ENDED', 'NOTE'],
        ...items.map((r) => {
          const s = r.suspension as { nodeId?: string; error?: unknown } | undefined;
          return [
            String(r.id),
            `${printable(r.workflow)} v${r.workflowVersion}`,
            r.status,
            time(r.createdAt),
            time(r.endedAt),
            s ? `at ${s.nodeId ?? '?'}: ${short(errorText(s.error), 80)}` : r.error ? short(errorText(r.error), 80) : withKey(pausedNote(r.pausedAt ?? null, waitNote(r, now)), r.businessKey),
          ];
        }),
      ])}\n`,
    );
  });

  common(
    program
      .command('fork')
      .argument('<id>', 'instance id', instanceIdArg)
      .description('start a copy of an instance from its state right after one history entry: done nodes keep their results, the rest run')
      .requiredOption('--at <entry>', 'the history entry: its id, or an ISO 8601 time (the last entry at or before it)')
      .option('--actor <name>', 'who starts it', defaultActor())
      .option('--wait', 'work the copy until it ends or needs a person; exit code by its status'),
  ).action(async (id: number, o: CommonOptions & { at: string; actor: string; wait?: boolean }) => {
    await withHost(o, io, 'write', async ({ engine, call }) => {
      const { id: forkId } = await call('instance:fork', { id, at: o.at, actor: o.actor });
      if (o.wait) run.exitCode = await waitAndReport(engine, call, forkId, o, run);
      else if (o.json) json(io, { id: forkId });
      else io.stdout(`started instance ${forkId}, a copy of instance ${id} as of history entry ${o.at}\n`);
    });
  });

  common(
    program
      .command('show')
      .argument('<id>', 'instance id', instanceIdArg)
      .description('show an instance: status, nodes, variables, and what it waits for')
      .option('--history', 'also print its history, oldest first (with --at: up to that entry)')
      .option('--at <entry>', 'as it was right after this history entry: its id, or an ISO 8601 time (the last entry at or before it)'),
  ).action(async (id: number, o: CommonOptions & { history?: boolean; at?: string }) => {
    await withHost(o, io, 'read', async ({ call }) => {
      const past = o.at === undefined ? undefined : await call('instance:stateAt', { id, at: o.at });
      const inst = past ? pastState(past.instance) : await call('instance:get', { id });
      const history = o.history ? (await fullHistory(call, id)).filter((h) => !past || h.id <= past.at.id) : undefined;
      const at = past ? { at: { ...past.at, position: past.position, entries: past.entries } } : {};
      if (o.json) return json(io, { ...inst, ...at, ...(history ? { history } : {}) });
      if (past) {
        const e = past.at;
        io.stdout(`as of history entry ${e.id} (${past.position} of ${past.entries}): ${e.type}${e.nodeId ? ` ${e.nodeId}` : ''} at ${time(e.at)}\n`);
      }
      io.stdout(await describeInstance(call, inst, shownDb(o.db), o.plugin, { hints: !past }));
      io.stdout(
        `created ${time(inst.createdAt)}, started ${time(inst.startedAt)}, ended ${time(inst.endedAt)}${inst.businessKey ? `, business key ${printable(inst.businessKey)}` : ''}${inst.priority ? `, priority ${inst.priority}` : ''}\n`,
      );
      io.stdout(`variables: ${short(inst.variables, 2000)}\n`);
      if (!history) return;
      io.stdout('history:\n');
      io.stdout(
        `${table(
          history.map((h) => [
            `  ${h.id}`,
            time(h.at),
            h.nodeId === null ? '-' : printable(h.nodeId),
            h.type,
            h.attempt === null ? '' : `attempt ${h.attempt}`,
            h.actor ? `by ${printable(h.actor)}` : '',
            h.data === undefined ? '' : short(h.data, 160),
          ]),
        )}\n`,
      );
    });
  });
}

/** Whole seconds (at least 1) from `now` to `at`, said as `in N s` (or `due now`). */
function inSeconds(at: number, now: number): string {
  const s = Math.ceil((at - now) / 1000);
  return s <= 0 ? 'due now' : `in ${s} s`;
}

/**
 * What a live instance waits for, for list's NOTE: a retry's backoff (which node, which attempt
 * comes, when), a delay, a person's decision, an event, child instances, a concurrency slot; ''
 * when it waits for nothing (or ended).
 */
export function waitNote(
  r: { waitingFor: string | null; currentNodes: string[]; attempt: number | null; maxAttempts: number | null; nextRetryAt: number | null },
  now: number,
): string {
  const at = r.currentNodes.length > 0 ? ` at ${r.currentNodes.map((n) => `"${printable(n)}"`).join(', ')}` : '';
  switch (r.waitingFor) {
    case 'retry': {
      const next = r.attempt !== null ? ` (attempt ${r.attempt + 1}${r.maxAttempts !== null ? ` of ${r.maxAttempts}` : ''})` : '';
      return `retry${at}${next}${r.nextRetryAt !== null ? ` ${inSeconds(r.nextRetryAt, now)}` : ''}`;
    }
    case 'timer':
      return `delay${at}`;
    case 'approval':
      return `waits for a person's decision${at}`;
    case 'event':
      return `waits for an event${at}`;
    case 'children':
      return `waits for child instances${at}`;
    case 'concurrency':
      return 'waits for a slot (concurrency limit)';
    default:
      return '';
  }
}

/**
 * A paused instance's note: `paused since <time> (unpause to go on)`, before what it waits for (a
 * delay or a retry keeps the time it had left, counted from the unpause).
 */
function pausedNote(pausedAt: number | null, note: string): string {
  if (pausedAt === null) return note;
  const paused = `paused since ${time(pausedAt)} (unpause to go on)`;
  return note === '' ? paused : `${paused}; ${note}`;
}

/** `note` and the business key together (`key …`), or whichever there is. */
function withKey(note: string, businessKey: string | null | undefined): string {
  if (!businessKey) return note;
  return note === '' ? printable(businessKey) : `${note} · key ${printable(businessKey)}`;
}
