/**
 * How the CLI tells what an instance is doing: the human report of one instance, progress lines
 * while it is worked, and what resume, approve, cancel and retry print after their action.
 */
import type { Engine, EngineEvent } from '../api';
import type { InstanceDetail } from '../api/contract';
import { ExitCode, exitCodeForStatus } from './exit-codes';
import { workUntil, type Call } from './host';
import { shownDb, type CliRun, type CommonOptions } from './options';
import { Progress, errorText, json, printable, shellQuote, short, table, terminalSafe } from './output';

/** What an instance's `suspension` holds (engine/runtime/state-machine.ts `Suspension`). */
interface SuspensionView {
  nodeId: string;
  kind: 'incident' | 'compensation';
  attempts: number;
  error: unknown;
}

/**
 * What `signal` says of an event no node took: when an event node of `inst` waits for the same name
 * with another key (or none), which node and which key, so a wrong `--key` is seen as such; else
 * that no node waits for it now.
 */
export function notTakenText(inst: { nodes: readonly { id: string; status: string; wait?: unknown }[] }, event: string, key: string | undefined): string {
  const sent = key === undefined ? 'this one has none' : `this one has "${printable(key)}"`;
  for (const n of inst.nodes) {
    const wait = n.wait as { kind?: string; name?: string; key?: string } | undefined;
    // The same key: the node took an earlier one (its worker has not settled it yet).
    if (n.status !== 'WAITING' || wait?.kind !== 'event' || wait.name !== event || wait.key === key) continue;
    const wanted = wait.key === undefined ? 'without a key' : `with key "${printable(wait.key)}"`;
    return `recorded, not taken: node "${printable(n.id)}" waits for it ${wanted} (${sent})`;
  }
  return 'recorded, not taken: no node waits for it now (an event node that waits for it later takes it)';
}

/** The hint of an instance left for a worker to carry on. */
export const CARRIES_ON = ' (a worker carries it on: npx runnel worker, or pass --wait)';

/** {@link CARRIES_ON} for an instance a worker moves on from `status` (RUNNING, COMPENSATING, PENDING), else nothing: an ended, waiting or suspended one has nothing for a worker to do now. */
export function carriesOn(status: string): string {
  return status === 'RUNNING' || status === 'COMPENSATING' || status === 'PENDING' ? CARRIES_ON : '';
}

/**
 * The human report of an instance: status line, nodes, and what a person can do next. The commands
 * it suggests work as printed (one action each, the others named after it; the `--plugin` modules
 * this command loaded, which the instance's node types may need). It reads no `version`: `show
 * --at` passes a past state without one.
 */
export async function describeInstance(call: Call, inst: Omit<InstanceDetail, 'version'>, dbFlag: string, plugins: readonly string[] = [], options: { hints?: boolean } = {}): Promise<string> {
  const hints = options.hints ?? true;
  const lines: string[] = [];
  const db = shellQuote(dbFlag) + plugins.map((p) => ` --plugin ${shellQuote(p)}`).join('');
  let order: string[] = [];
  try {
    order = (await call('workflow:get', { name: inst.workflow, version: inst.workflowVersion })).definition.nodes.map((n) => n.id);
  } catch {
    // A report without the definition's order (a deleted workflow) is still a report.
  }
  const rank = (id: string) => (order.includes(id) ? order.indexOf(id) : order.length);
  const took =
    inst.endedAt !== null && inst.startedAt !== null ? ` in ${((inst.endedAt - inst.startedAt) / 1000).toFixed(2)} s` : '';
  lines.push(`instance ${inst.id} (${inst.workflow} v${inst.workflowVersion}) ${inst.status}${took}`);
  // What the status alone does not say: paused by a person, held for a concurrency slot.
  if (inst.pausedAt !== null && inst.pausedAt !== undefined) {
    lines.push(`paused since ${new Date(inst.pausedAt).toISOString()}: it starts no node until unpaused`);
    if (hints) lines.push(`  unpause with: npx runnel unpause ${inst.id} --db ${db}`);
  }
  if (inst.held === true) lines.push('held: it waits for a slot of its workflow\'s concurrency limit (it runs when an instance of its slot ends)');
  const rows = inst.nodes
    .slice()
    .sort((a, b) => rank(a.id) - rank(b.id) || a.id.localeCompare(b.id))
    .map((n) => [
      `  ${n.id}`,
      n.status,
      n.attempt > 0 ? `attempt ${n.attempt}/${n.maxAttempts}` : '',
      n.error && n.status !== 'COMPLETED' ? short(errorText(n.error), 120) : '',
    ]);
  if (rows.length > 0) lines.push(table(rows));
  if (inst.error) lines.push(`error: ${terminalSafe(errorText(inst.error))}`);
  for (const n of inst.nodes) {
    const wait = n.wait as { kind?: string; prompt?: string; name?: string; key?: string } | undefined;
    if (n.status !== 'WAITING') continue;
    if (wait?.kind === 'approval') {
      // The prompt is the workflow author's text: printed on one line, escaped.
      lines.push(`waiting for a person at "${n.id}"${wait.prompt ? `: ${printable(wait.prompt)}` : ''}`);
      if (hints) lines.push(`  decide with: npx runnel approve ${inst.id} ${shellQuote(n.id)} --approve --db ${db} (or --reject)`);
    } else if (wait?.kind === 'event' && wait.name !== undefined) {
      const key = wait.key === undefined ? '' : ` with key "${printable(wait.key)}"`;
      lines.push(`waiting at "${n.id}" for event "${printable(wait.name)}"${key}`);
      if (hints) lines.push(`  send it with: npx runnel signal ${inst.id} ${shellQuote(wait.name)}${wait.key === undefined ? '' : ` --key ${shellQuote(wait.key)}`} --db ${db}`);
    }
  }
  const s = inst.suspension as SuspensionView | undefined;
  if (inst.status === 'SUSPENDED' && s) {
    lines.push(
      `suspended at "${s.nodeId}" (${s.kind === 'incident' ? 'its retries ran out' : 'its compensation failed'} after ${s.attempts} attempt${s.attempts === 1 ? '' : 's'}): ${terminalSafe(errorText(s.error))}`,
    );
    if (hints) lines.push(`  resume with: npx runnel resume ${inst.id} --action retry --db ${db} (or --action skip, --action fail)`);
  }
  if (hints && inst.status === 'FAILED') lines.push(`  retry with: npx runnel retry ${inst.id} --db ${db}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Prints per-node progress lines of instance `instanceId()` while it is worked, with the error of
 * a failed attempt (read through `call`). Lines keep the order of the events. The returned
 * function stops following and resolves once every line is printed.
 */
export function followInstance(
  engine: Engine,
  call: Call,
  progress: Progress,
  instanceId: () => number | undefined,
): () => Promise<void> {
  if (!progress.enabled) return () => Promise.resolve();
  const t0 = Date.now();
  const asked = new Set<string>();
  // What each node was last said to be (`status`, with the attempt where it tells one apart), and
  // the instance: a line is printed when it differs. This process's events say what it commits;
  // another process's commits (a worker beside it) are found by reading the instance when the
  // store says another connection committed, so the log leaves out no step either did.
  const said = new Map<string, string>();
  let instanceSaid: string | undefined;
  const nodeKey = (status: string, attempt: number | undefined) =>
    status === 'RUNNING' || status === 'RETRYING' || status === 'FAILED' ? `${status}/${attempt ?? '?'}` : status;
  // A line that needs a read waits for it; the lines after it wait their turn.
  let printed = Promise.resolve();
  const print = (line: () => Promise<string | string[] | undefined> | string | string[] | undefined) => {
    printed = printed.then(async () => {
      const text = await line();
      for (const l of text === undefined ? [] : Array.isArray(text) ? text : [text]) progress.line(l);
    });
  };
  const stamp = () => `+${((Date.now() - t0) / 1000).toFixed(2)}s`;
  /** The line of a node now `status` at `attempt`, or undefined when it was said already; `error` undefined: not known yet (read for a failure). */
  const nodeLine = async (at: string, nodeId: string, status: string, attempt: number | undefined, error?: unknown): Promise<string | undefined> => {
    const key = nodeKey(status, attempt);
    if (said.get(nodeId) === key) return undefined;
    said.set(nodeId, key);
    // The approval's own line already said it waits.
    if (status === 'WAITING' && asked.delete(nodeId)) return undefined;
    if (status === 'RETRYING' || status === 'FAILED') {
      let e = error;
      let n = attempt;
      if (e === undefined) {
        const id = instanceId();
        const node = id === undefined ? undefined : await call('instance:get', { id }).then((inst) => inst.nodes.find((x) => x.id === nodeId)).catch(() => undefined);
        e = node?.error;
        n ??= node?.attempt;
      }
      return `  ${at}  ${nodeId}  ${status} after attempt ${n ?? '?'}${e ? `: ${short(errorText(e), 160)}` : ''}`;
    }
    return `  ${at}  ${nodeId}  ${status}${attempt !== undefined && status === 'RUNNING' ? ` (attempt ${attempt})` : ''}`;
  };
  const instanceLine = (at: string, status: string): string | undefined => {
    if (instanceSaid === status) return undefined;
    instanceSaid = status;
    return `  ${at}  instance ${status}`;
  };
  /** Reads the instance and says each change of it not said yet (another process's commits). */
  const readChanges = (): void => {
    const id = instanceId();
    if (id === undefined) return;
    const at = stamp();
    print(async () => {
      const inst = await call('instance:get', { id }).catch(() => undefined);
      if (!inst) return undefined;
      const lines: string[] = [];
      for (const n of inst.nodes) {
        if (n.status === 'PENDING') continue;
        // The node as read: its error is known (null when none), so nodeLine reads nothing again.
        const line = await nodeLine(at, n.id, n.status, n.attempt, n.error ?? null);
        if (line !== undefined) lines.push(line);
      }
      const line = instanceLine(at, inst.status);
      if (line !== undefined) lines.push(line);
      return lines;
    });
  };
  const off = engine.on((e: EngineEvent) => {
    if (e.type === 'store.changed') {
      readChanges();
      return;
    }
    if (!('instanceId' in e) || e.instanceId !== instanceId()) return;
    const at = stamp();
    if (e.type === 'node.changed') {
      const { nodeId, status, attempt } = e;
      print(() => nodeLine(at, nodeId, status, attempt));
    } else if (e.type === 'approval.requested') {
      asked.add(e.nodeId);
      print(() => `  ${at}  ${e.nodeId}  waits for a person${e.prompt ? `: ${short(e.prompt, 160)}` : ''}`);
    } else if (e.type === 'instance.changed' || e.type === 'instance.finished') {
      const { status } = e;
      print(() => instanceLine(at, status));
    }
  });
  const unwatch = engine.watchExternalChanges(100);
  return async () => {
    unwatch();
    off();
    // What another process committed since the last look (its last steps, the instance's end).
    readChanges();
    await printed;
  };
}

/**
 * Works instance `id` until it settles (ends, or can go on only by a person) or the run is
 * interrupted, prints it, and returns the exit code of its status (130 when interrupted).
 */
export async function waitAndReport(engine: Engine, call: Call, id: number, o: CommonOptions, run: CliRun): Promise<number> {
  const progress = new Progress(run.io, !o.json);
  const stop = followInstance(engine, call, progress, () => id);
  let settled: boolean;
  try {
    settled = await workUntil(engine, () => engine.isSettled(id), run.signal);
  } finally {
    await stop();
    progress.flush();
  }
  const inst = await call('instance:get', { id });
  if (o.json) json(run.io, inst);
  else run.io.stdout(await describeInstance(call, inst, shownDb(o.db), o.plugin));
  if (!settled) {
    run.io.stderr(
      `interrupted: instance ${id} is ${inst.status}; a worker carries it on (npx runnel worker --db ${shellQuote(shownDb(o.db))})\n`,
    );
    return ExitCode.INTERRUPTED;
  }
  return exitCodeForStatus(inst.status);
}

/**
 * What resume, approve, cancel and retry print after their action: with `--wait`, work the
 * instance and set the exit code from its end; otherwise the instance (`--json`) or the one line
 * `describe` makes of its status.
 */
export async function reportAfterAction(
  engine: Engine,
  call: Call,
  id: number,
  o: CommonOptions & { wait?: boolean },
  run: CliRun,
  describe: (status: string) => string,
): Promise<void> {
  if (o.wait) {
    run.exitCode = await waitAndReport(engine, call, id, o, run);
    return;
  }
  const after = await call('instance:get', { id });
  if (o.json) json(run.io, after);
  else run.io.stdout(`${describe(after.status)}\n`);
}
