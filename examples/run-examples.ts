/**
 * The demo: runs the three examples on one database file and reports how every instance ended.
 * `runnel demo [--db FILE]` and `npm run demo` call {@link runExamples}.
 *
 * 1. starts the simulated device fleet ({@link startDeviceServer}) on 127.0.0.1;
 * 2. deploys `ota-upgrade`, `purchase-approval` and `csv-pipeline` (with the custom node types of
 *    `pipeline-nodes.ts`), and `ota-fleet` (the rollout that maps ota-upgrade over a device list);
 * 3. launches one OTA instance per device, two purchase requests and one pipeline run;
 * 4. works them until every one has ended or waits for a person; the demo plays the manager and
 *    decides each purchase a moment after it starts waiting (one approved, one rejected);
 * 5. checks each instance against its expected end and that none was lost.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Engine } from '../engine/runtime/engine';
import { isPostgresUrl } from '../engine/db/postgres/errors';
import { createDefaultRegistry } from '../engine/nodes/index';
import { parseWorkflowText } from '../engine/dsl/parse';
import { demoFleetPort, startDeviceServer, type DeviceFate, type DeviceFleetServer } from './device-server';
import { register as registerPipelineNodes } from './pipeline-nodes';

/** The examples folder. */
export const EXAMPLES_DIR = path.dirname(fileURLToPath(import.meta.url));

/** The example workflow files, by workflow name. */
export const EXAMPLE_FILES = {
  'ota-upgrade': path.join(EXAMPLES_DIR, 'ota-upgrade.workflow.json'),
  'ota-fleet': path.join(EXAMPLES_DIR, 'ota-fleet.workflow.json'),
  'purchase-approval': path.join(EXAMPLES_DIR, 'purchase-approval.workflow.json'),
  'csv-pipeline': path.join(EXAMPLES_DIR, 'csv-pipeline.workflow.json'),
} as const;

/** Options of {@link runExamples}. */
export interface RunExamplesOptions {
  /** The Runnel database file (created when missing). */
  db: string;
  synchronous?: 'FULL' | 'NORMAL';
  /** Devices in the fleet, default 20 (fates repeat every ten: see `fateOf`). */
  devices?: number;
  /** Receives progress lines (throttled to about one a second); omit for silence. */
  progress?: (line: string) => void;
  /** Aborting stops the worker and reports what ended so far. */
  signal?: AbortSignal;
  /** Stop working after this long, ms (default {@link demoTimeLimitMs} of the fleet size). */
  timeoutMs?: number;
  /** The pipeline's output SQLite file; default `<db name>.orders.db` beside the database. */
  pipelineOutput?: string;
  /**
   * The fleet's port (default {@link demoFleetPort}, where the demo plug-in serves the fleet
   * again for the app); when it is taken, a free port (said in the progress lines: the instances
   * left then need a fleet at that address).
   */
  fleetPort?: number;
}

/** How the instances of one workflow ended. */
export interface WorkflowTally {
  launched: number;
  completed: number;
  /** FAILED after compensations ran (e.g. a rolled-back flash). */
  compensated: number;
  /** FAILED without compensation. */
  failed: number;
  cancelled: number;
  suspended: number;
  /** WAITING for a person (an approval). */
  waiting: number;
  /**
   * Still working when the demo stopped (time limit or interrupt): unfinished, not lost (it is in
   * the database, and a worker carries it on).
   */
  unsettled: number;
}

/** One launched instance, what the demo expected of it and what happened. */
export interface DemoOutcome {
  instanceId: number;
  workflow: string;
  subject: string;
  expected: string;
  actual: string;
}

/** What {@link runExamples} reports. */
export interface DemoSummary {
  db: string;
  elapsedMs: number;
  launched: number;
  /** Instances in a terminal state, SUSPENDED or waiting for a person. */
  accounted: number;
  /** Instances still working when the demo stopped (`launched - accounted`). */
  unfinished: number;
  /** The time limit the demo worked under, ms. */
  timeLimitMs: number;
  /** Every launched instance is accounted for (none unfinished). */
  noInstanceLost: boolean;
  tallies: Record<string, WorkflowTally>;
  ota: {
    upgraded: number;
    alreadyCurrent: number;
    rolledBack: number;
    suspended: number;
    httpCalls: number;
    transient503s: number;
  };
  purchases: { ordered: number; rejected: number; waiting: number };
  pipeline: {
    rowsRead: number;
    rowsRejected: number;
    rowsLoaded: number;
    tableRows: number;
    loadAttempts: number;
    outputFile: string;
  };
  outcomes: DemoOutcome[];
  /** Outcomes whose actual end differs from the expected one. */
  unexpected: DemoOutcome[];
  /** Every instance reached its expected end and none was lost. */
  ok: boolean;
  /** The human-readable report. */
  report: string;
}

type Instance = Awaited<ReturnType<Engine['getInstance']>>;

const EXPECTED_OTA: Record<DeviceFate, string> = {
  upgrade: 'COMPLETED (upgraded)',
  current: 'COMPLETED (already current)',
  bricked: 'FAILED (rolled back)',
  flaky: 'SUSPENDED at verify',
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function node(inst: Instance, id: string) {
  return inst.nodes.find((n) => n.id === id);
}

function isWaitingForPerson(inst: Instance): boolean {
  return (
    inst.status === 'WAITING' &&
    inst.nodes.some(
      (n) => n.status === 'WAITING' && (n.wait as { kind?: string } | undefined)?.kind === 'approval',
    )
  );
}

function classifyOta(
  inst: Instance,
  fleet: DeviceFleetServer,
  deviceId: string,
  startVersion: string,
): string {
  const device = fleet.devices.get(deviceId);
  if (inst.status === 'COMPLETED') {
    if (node(inst, 'download')?.status === 'SKIPPED') return 'COMPLETED (already current)';
    return device?.version === fleet.targetVersion
      ? 'COMPLETED (upgraded)'
      : `COMPLETED (but the device runs ${device?.version ?? '?'})`;
  }
  if (inst.status === 'FAILED' && inst.nodes.some((n) => n.status === 'COMPENSATED')) {
    return device?.version === startVersion
      ? 'FAILED (rolled back)'
      : `FAILED (compensated, but the device runs ${device?.version ?? '?'})`;
  }
  if (inst.status === 'SUSPENDED') return `SUSPENDED at ${inst.suspension?.nodeId ?? '?'}`;
  return inst.status;
}

function classifyPurchase(inst: Instance): string {
  if (inst.status === 'COMPLETED') {
    if (node(inst, 'order')?.status === 'COMPLETED') return 'COMPLETED (ordered)';
    if (node(inst, 'notify-rejection')?.status === 'COMPLETED') return 'COMPLETED (rejected)';
  }
  if (isWaitingForPerson(inst)) return 'WAITING (approval)';
  return inst.status;
}

function classifyPipeline(inst: Instance): string {
  if (inst.status !== 'COMPLETED') return inst.status;
  const loaded = inst.variables.loaded as { rows?: number } | undefined;
  const cleaned = inst.variables.cleaned as { kept?: number } | undefined;
  if (loaded?.rows === undefined || loaded.rows !== cleaned?.kept) return 'COMPLETED (row counts differ)';
  return (node(inst, 'load')?.attempt ?? 0) >= 2
    ? 'COMPLETED (load retried)'
    : 'COMPLETED (load not retried)';
}

function emptyTally(): WorkflowTally {
  return {
    launched: 0,
    completed: 0,
    compensated: 0,
    failed: 0,
    cancelled: 0,
    suspended: 0,
    waiting: 0,
    unsettled: 0,
  };
}

function tally(t: WorkflowTally, inst: Instance): boolean {
  t.launched++;
  switch (inst.status) {
    case 'COMPLETED':
      t.completed++;
      return true;
    case 'FAILED':
      if (inst.nodes.some((n) => n.status === 'COMPENSATED')) t.compensated++;
      else t.failed++;
      return true;
    case 'CANCELLED':
      t.cancelled++;
      return true;
    case 'SUSPENDED':
      t.suspended++;
      return true;
    default:
      if (isWaitingForPerson(inst)) {
        t.waiting++;
        return true;
      }
      t.unsettled++;
      return false;
  }
}

async function deployExample(engine: Engine, file: string): Promise<{ name: string; version: number }> {
  const raw = parseWorkflowText(await fs.promises.readFile(file, 'utf8'), file);
  const r = await engine.deploy(raw);
  return { name: r.name, version: r.version };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * `--plugin` of the demo's plug-in as the printed commands give it: relative to the current
 * directory (`examples/demo-plugin.ts` from the repository root), so they work where the demo ran.
 */
const DEMO_PLUGIN_FLAG = ((): string => {
  const rel = path.relative(process.cwd(), fileURLToPath(new URL('./demo-plugin.ts', import.meta.url))) || 'demo-plugin.ts';
  return /^[\w./-]+$/.test(rel) ? rel : `'${rel.replace(/'/g, `'\\''`)}'`;
})();

function formatReport(s: Omit<DemoSummary, 'report'>, dbFlag: string): string {
  const t = (name: string) => s.tallies[name] ?? emptyTally();
  const ota = t('ota-upgrade');
  const buy = t('purchase-approval');
  const csv = t('csv-pipeline');
  const lines = [
    '',
    `Runnel demo: ${plural(s.launched, 'instance')} of 3 workflows on ${s.db}, ${(s.elapsedMs / 1000).toFixed(1)} s`,
    '',
    `  ota-upgrade        ${ota.launched} devices: ${ota.completed} completed (${s.ota.upgraded} upgraded, ${s.ota.alreadyCurrent} already current), ` +
      `${ota.compensated} compensated (flash rolled back), ${ota.suspended} suspended for a person, ${ota.waiting} waiting` +
      (ota.failed + ota.cancelled > 0 ? `, ${ota.failed} failed, ${ota.cancelled} cancelled` : ''),
    `                     ${s.ota.httpCalls} HTTP calls to the fleet; ${s.ota.transient503s} answered 503 and were retried`,
    `  purchase-approval  ${buy.launched} requests: ${buy.completed} completed (${s.purchases.ordered} approved → order, ${s.purchases.rejected} rejected → notify-rejection), ${buy.waiting} waiting for a person`,
    `  csv-pipeline       ${csv.launched} run: ${csv.completed} completed; ${s.pipeline.rowsLoaded} of ${s.pipeline.rowsRead} rows loaded ` +
      `(${s.pipeline.rowsRejected} rejected by clean; load succeeded on attempt ${s.pipeline.loadAttempts}) into ${s.pipeline.outputFile}`,
    '',
    s.unfinished === 0
      ? `no instance lost: all ${s.launched} launched instances ended, are suspended, or wait for a person`
      : `NOT FINISHED within ${(s.timeLimitMs / 1000).toFixed(s.timeLimitMs < 10_000 ? 1 : 0)} s: ${s.unfinished} of ${s.launched} instances are still working ` +
        `(none is lost: they are in the database; finish them with npx runnel worker --until-idle --plugin ${DEMO_PLUGIN_FLAG} --db ${dbFlag})`,
  ];
  if (s.unexpected.length === 0) lines.push('every instance reached its expected end');
  else {
    lines.push(`${plural(s.unexpected.length, 'instance')} did not reach the expected end:`);
    for (const u of s.unexpected)
      lines.push(
        `  instance ${u.instanceId} (${u.workflow} ${u.subject}): expected ${u.expected}, got ${u.actual}`,
      );
  }
  const suspended = s.outcomes.filter((o) => o.actual.startsWith('SUSPENDED'));
  const first = suspended[0]?.instanceId;
  if (first !== undefined) {
    // A suspended instance's deadline keeps running: said here, or a resume after it meets a FAILED instance.
    const deadlineMs = (JSON.parse(fs.readFileSync(EXAMPLE_FILES['ota-upgrade'], 'utf8')) as { deadlineMs?: number }).deadlineMs;
    const until = deadlineMs === undefined ? '' : ` until ota-upgrade's deadline, ${Math.round(deadlineMs / 60_000)} min after each started (it fails them then)`;
    lines.push(
      `suspended instances wait for a person${until}: npx runnel show ${first} --history --db ${dbFlag}; ` +
        `npx runnel resume ${first} --action retry --plugin ${DEMO_PLUGIN_FLAG} --db ${dbFlag} (or --action skip, --action fail; the plug-in serves the fleet the OTA steps call)`,
    );
  }
  lines.push(`look at it in the app: npx runnel serve --open --plugin ${DEMO_PLUGIN_FLAG} --db ${dbFlag} (or npm run web; the plug-in brings the demo's node types and fleet)`);
  return `${lines.join('\n')}\n`;
}

/**
 * The demo's default time limit for a fleet of `devices`, ms: 50 s plus 100 ms a device.
 *
 * Measured on a 2-core machine: ~35 ms of work per device (200 devices in 7 s), so a big fleet
 * (`--devices 2000`) gets its time instead of being cut at a fixed 50 s.
 */
export function demoTimeLimitMs(devices: number): number {
  return 50_000 + 100 * devices;
}

/** The demo's fleet on `port`, or on a free port when `port` is taken. */
async function startFleet(size: number, port: number, say: (line: string) => void): Promise<DeviceFleetServer> {
  try {
    return await startDeviceServer({ size, port });
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'EADDRINUSE') throw err;
    const fleet = await startDeviceServer({ size });
    say(`demo: port ${port} is taken; the fleet runs at ${fleet.baseUrl} (instances left waiting will need a fleet there)`);
    return fleet;
  }
}

/**
 * Runs the demo (see the module comment) and returns its summary; `exitCode` is 0 when every
 * instance reached its expected end within the time limit, else 1 (130 when interrupted).
 */
export async function runExamples(
  options: RunExamplesOptions,
): Promise<{ exitCode: number; summary: DemoSummary }> {
  const t0 = Date.now();
  const say = options.progress ?? (() => undefined);
  const size = options.devices ?? 20;
  // Beside the database file; for a PostgreSQL database, in the working directory.
  const outputFile = path.resolve(
    options.pipelineOutput ??
      (isPostgresUrl(options.db)
        ? 'runnel.orders.db'
        : path.join(path.dirname(path.resolve(options.db)), `${path.basename(options.db).replace(/\.db$/, '')}.orders.db`)),
  );
  const fleet = await startFleet(size, options.fleetPort ?? demoFleetPort(), say);
  const startVersions = new Map([...fleet.devices.values()].map((d) => [d.id, d.version]));
  const registry = createDefaultRegistry();
  registerPipelineNodes(registry);
  const engine = Engine.open(options.db, {
    registry,
    synchronous: options.synchronous ?? 'FULL',
    concurrency: 32,
    pollIntervalMs: 20,
  });
  try {
    const ota = await deployExample(engine, EXAMPLE_FILES['ota-upgrade']);
    const buy = await deployExample(engine, EXAMPLE_FILES['purchase-approval']);
    const csv = await deployExample(engine, EXAMPLE_FILES['csv-pipeline']);
    // The rollout over a list of devices (a map of ota-upgrade), deployed for the app; the demo
    // upgrades its devices one instance each.
    await deployExample(engine, EXAMPLE_FILES['ota-fleet']);
    say(
      `demo: fleet of ${size} devices at ${fleet.baseUrl}; deployed ${ota.name} v${ota.version}, ${buy.name} v${buy.version}, ${csv.name} v${csv.version}`,
    );

    const launched: Array<{ id: number; workflow: string; subject: string; expected: string }> = [];
    for (const d of fleet.devices.values()) {
      const id = await engine.start(ota.name, {
        version: ota.version,
        variables: { deviceId: d.id, baseUrl: fleet.baseUrl, targetVersion: fleet.targetVersion },
        businessKey: d.id,
        actor: 'demo',
      });
      launched.push({ id, workflow: ota.name, subject: d.id, expected: EXPECTED_OTA[d.fate] });
    }
    const decisions = new Map<number, { approved: boolean; comment: string; data?: unknown }>();
    const requests = [
      {
        requester: 'Ada Lovelace',
        items: [{ sku: 'SKU-1002', name: 'Sensor node v2', quantity: 12, unitPrice: 89.5 }],
        approved: true,
      },
      {
        requester: 'Linus Torvalds',
        items: [
          { sku: 'SKU-1003', name: 'Gateway, outdoor', quantity: 40, unitPrice: 349 },
          { sku: 'SKU-1007', name: 'Support plan (1 year)', quantity: 40, unitPrice: 199 },
        ],
        approved: false,
      },
    ];
    for (const r of requests) {
      const id = await engine.start(buy.name, {
        version: buy.version,
        variables: { requester: r.requester, items: r.items },
        businessKey: r.requester,
        actor: 'demo',
      });
      decisions.set(
        id,
        r.approved
          ? { approved: true, comment: 'within budget', data: { costCenter: 'R&D-42' } }
          : { approved: false, comment: 'over the quarterly budget' },
      );
      launched.push({
        id,
        workflow: buy.name,
        subject: `request by ${r.requester}`,
        expected: r.approved ? 'COMPLETED (ordered)' : 'COMPLETED (rejected)',
      });
    }
    const pipelineId = await engine.start(csv.name, {
      version: csv.version,
      variables: { outputFile },
      actor: 'demo',
    });
    launched.push({
      id: pipelineId,
      workflow: csv.name,
      subject: 'orders.csv',
      expected: 'COMPLETED (load retried)',
    });
    say(
      `demo: launched ${launched.length} instances (${size} OTA, ${requests.length} purchases, 1 pipeline); working…`,
    );

    // Work until every instance is settled and every purchase was decided.
    const waitingSince = new Map<number, number>();
    const timeLimitMs = options.timeoutMs ?? demoTimeLimitMs(size);
    const deadline = t0 + timeLimitMs;
    let lastReport = Date.now();
    // Only instances not yet settled are checked each turn: with thousands of devices, asking
    // about every one every turn starved the worker that shares this thread.
    const working = new Set(launched.map((l) => l.id));
    engine.startWorker();
    try {
      for (;;) {
        if (options.signal?.aborted || Date.now() > deadline) break;
        for (const id of working) if ((await engine.isSettled(id))) working.delete(id);
        for (const [id, decision] of decisions) {
          if (working.has(id)) continue;
          const inst = (await engine.getInstance(id));
          if (!isWaitingForPerson(inst)) continue;
          const since = waitingSince.get(id) ?? Date.now();
          waitingSince.set(id, since);
          // Leave it waiting a moment, as a person would, so the monitor shows the approval.
          if (Date.now() - since < 300) continue;
          await engine.approve(id, 'approve', { ...decision, actor: 'demo-bot' });
          decisions.delete(id);
          working.add(id);
          say(
            `demo: purchase ${id} ${decision.approved ? 'approved' : 'rejected'} by demo-bot (${decision.comment})`,
          );
        }
        if (working.size === 0 && decisions.size === 0) break;
        if (Date.now() - lastReport >= 1000) {
          lastReport = Date.now();
          say(
            `demo: ${((Date.now() - t0) / 1000).toFixed(1)} s: ${launched.length - working.size} of ${launched.length} instances settled, ${working.size} working`,
          );
        }
        await sleep(working.size > 100 ? 100 : 20);
      }
    } finally {
      await engine.stopWorker();
    }

    // Account for every instance.
    const tallies: Record<string, WorkflowTally> = {
      [ota.name]: emptyTally(),
      [buy.name]: emptyTally(),
      [csv.name]: emptyTally(),
    };
    const outcomes: DemoOutcome[] = [];
    let accounted = 0;
    for (const l of launched) {
      const inst = (await engine.getInstance(l.id));
      if (tally(tallies[l.workflow] ?? emptyTally(), inst)) accounted++;
      const actual =
        l.workflow === ota.name
          ? classifyOta(inst, fleet, l.subject, startVersions.get(l.subject) ?? '')
          : l.workflow === buy.name
            ? classifyPurchase(inst)
            : classifyPipeline(inst);
      outcomes.push({
        instanceId: l.id,
        workflow: l.workflow,
        subject: l.subject,
        expected: l.expected,
        actual,
      });
    }
    const pipe = (await engine.getInstance(pipelineId));
    const extract = node(pipe, 'extract')?.output as { count?: number } | undefined;
    const cleaned = pipe.variables.cleaned as { kept?: number } | undefined;
    const loaded = pipe.variables.loaded as { rows?: number; total?: number } | undefined;
    const count = (label: string) => outcomes.filter((o) => o.actual === label).length;
    const unexpected = outcomes.filter((o) => o.actual !== o.expected);
    const base: Omit<DemoSummary, 'report'> = {
      db: path.resolve(options.db),
      elapsedMs: Date.now() - t0,
      launched: launched.length,
      accounted,
      unfinished: launched.length - accounted,
      timeLimitMs,
      noInstanceLost: accounted === launched.length,
      tallies,
      ota: {
        upgraded: count('COMPLETED (upgraded)'),
        alreadyCurrent: count('COMPLETED (already current)'),
        rolledBack: count('FAILED (rolled back)'),
        suspended: count('SUSPENDED at verify'),
        httpCalls: fleet.calls.length,
        transient503s: fleet.calls.filter((c) => c.status === 503).length,
      },
      purchases: {
        ordered: count('COMPLETED (ordered)'),
        rejected: count('COMPLETED (rejected)'),
        waiting: count('WAITING (approval)'),
      },
      pipeline: {
        rowsRead: extract?.count ?? 0,
        rowsRejected: (extract?.count ?? 0) - (cleaned?.kept ?? 0),
        rowsLoaded: loaded?.rows ?? 0,
        tableRows: loaded?.total ?? 0,
        loadAttempts: node(pipe, 'load')?.attempt ?? 0,
        outputFile,
      },
      outcomes,
      unexpected,
      ok: unexpected.length === 0 && accounted === launched.length,
    };
    const summary: DemoSummary = { ...base, report: formatReport(base, options.db) };
    const exitCode = options.signal?.aborted ? 130 : summary.ok ? 0 : 1;
    return { exitCode, summary };
  } finally {
    await engine.close();
    await fleet.close();
  }
}

// `npx tsx examples/run-examples.ts [db]` runs the demo without the CLI.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { exitCode, summary } = await runExamples({
    db: process.argv[2] ?? 'runnel.db',
    progress: (l) => console.error(l),
  });
  process.stdout.write(summary.report);
  process.exitCode = exitCode;
}
