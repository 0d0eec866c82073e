/**
 * Commands that work instances in this process: `run` (deploy + start + work until the instance
 * settles), `worker` (the worker loop over every instance) and `demo` (the examples).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { probeDatabase } from '../../db/open-database';
import { retentionFlags, retentionOptions, type RetentionFlags } from '../retention-options';
import { loadRegistry, readWorkflowFile, rehearse, withHost, workUntil } from '../host';
import { ExitCode } from '../exit-codes';
import { collectPin, common, defaultActor, parseVariables, positiveInt, shownDb, usage, type CliRun, type CommonOptions } from '../options';
import { EngineMetrics } from '../../api';
import { EngineError } from '../../errors';
import { serveMetrics, type MetricsServer } from '../metrics-server';
import { Progress, json, shellQuote } from '../output';
import { waitAndReport } from '../report';

/** Adds `run`, `worker` and `demo` to `program`. */
export function addWorkCommands(program: Command, run: CliRun): void {
  const { io } = run;

  common(
    program
      .command('run')
      .argument('<file>', 'workflow file (JSON or YAML)')
      .description('deploy a workflow, start it, and work it until it ends or waits for a person')
      .option('--vars <json>', 'initial variables, a JSON object')
      .option('--vars-file <file>', 'initial variables from a JSON file (--vars keys win)')
      .option('--business-key <key>', 'a key of your own to find the instance by')
      .option('--actor <name>', 'who starts it', defaultActor())
      .option('--concurrency <n>', 'handlers running at once', positiveInt('--concurrency'))
      .option('--test', 'a test run: runs for real, but left out of the metrics and the default list (runnel list --test shows it)')
      .option('--pin <node=json>', 'with --test: node <node> completes with this JSON result and its handler does not run (repeatable)', collectPin),
  ).action(
    async (
      file: string,
      o: CommonOptions & { vars?: string; varsFile?: string; businessKey?: string; actor: string; concurrency?: number; test?: boolean; pin?: Record<string, unknown> },
    ) => {
      if (o.pin !== undefined && o.test !== true) throw usage('--pin needs --test: pinned results are for test runs only', { flag: '--pin' });
      const variables = await parseVariables(o);
      const registry = await loadRegistry(o.plugin);
      const start = { variables, businessKey: o.businessKey, actor: o.actor, ...(o.test === true ? { test: true, ...(o.pin === undefined ? {} : { pins: o.pin }) } : {}) };
      // The same save and start in memory first: an invalid file or refused variables leave no
      // database and no deployed workflow behind.
      const { definition } = await rehearse(registry, io, async (call) => {
        const wf = await readWorkflowFile(file, call);
        const saved = await call('workflow:save', { definition: wf.definition });
        await call('instance:start', { workflow: saved.name, version: saved.version, ...start });
        return wf;
      });
      await withHost(
        o,
        io,
        'create',
        async ({ engine, call }) => {
          const dep = await call('workflow:save', { definition });
          const { id } = await call('instance:start', { workflow: dep.name, version: dep.version, ...start });
          if (!o.json) io.stderr(`run: ${dep.created ? 'deployed' : 'using'} ${dep.name} v${dep.version}; started ${o.test === true ? 'test run' : 'instance'} ${id}${o.pin === undefined ? '' : ` (pinned: ${Object.keys(o.pin).join(', ')})`}\n`);
          run.exitCode = await waitAndReport(engine, call, id, o, run);
          if (!o.json) io.stderr(`details: npx runnel show ${id} --history --db ${shellQuote(shownDb(o.db))}\n`);
        },
        o.concurrency === undefined ? {} : { concurrency: o.concurrency },
        registry,
      );
    },
  );

  common(
    retentionFlags(program
      .command('worker')
      .description('work every instance in the database (until Ctrl-C, or until idle)')
      .option('--concurrency <n>', 'handlers running at once', positiveInt('--concurrency'), 32)
      .option('--until-idle', 'stop when no step is ready, retrying or on a timer (approvals do not count)')
      .option('--metrics-port <n>', 'serve this worker\'s Prometheus metrics at http://127.0.0.1:<n>/metrics, without a token (0 picks a free port)', (v: string) => {
        if (!/^\d+$/.test(v) || Number(v) > 65_535) throw new InvalidArgumentError(`--metrics-port must be 0–65535 (got "${v}")`);
        return Number(v);
      }), true),
  ).action(async (o: CommonOptions & RetentionFlags & { concurrency: number; untilIdle?: boolean; metricsPort?: number }) => {
    await withHost(
      o,
      io,
      'write',
      async ({ engine }) => {
        const metrics = o.metricsPort === undefined ? undefined : new EngineMetrics(engine);
        let metricsServer: MetricsServer | undefined;
        if (metrics && o.metricsPort !== undefined) {
          try {
            metricsServer = await serveMetrics(metrics, o.metricsPort);
          } catch (err) {
            metrics.close();
            if ((err as { code?: unknown }).code === 'EADDRINUSE') {
              throw new EngineError('CONFLICT', `port ${o.metricsPort} on 127.0.0.1 is in use (pick another with --metrics-port, or 0)`, { kind: 'user' });
            }
            throw err;
          }
          if (!o.json) io.stderr(`worker: metrics at http://127.0.0.1:${metricsServer.port}/metrics\n`);
        }
        const progress = new Progress(io, !o.json);
        const finished: Record<string, number> = {};
        let transitions = 0;
        const off = engine.on((e) => {
          if (e.type === 'node.changed') transitions++;
          if (e.type === 'instance.finished') finished[e.status] = (finished[e.status] ?? 0) + 1;
          if (e.type === 'instance.changed' && e.status === 'SUSPENDED') finished.SUSPENDED = (finished.SUSPENDED ?? 0) + 1;
        });
        const summary = () =>
          `worker: ${transitions} node transitions; instances ended: ${
            Object.entries(finished)
              .map(([k, v]) => `${v} ${k}`)
              .join(', ') || 'none'
          }`;
        let last = summary();
        const timer = setInterval(() => {
          const s = summary();
          if (s !== last) progress.line(s);
          last = s;
        }, 1000);
        const t0 = Date.now();
        let completed: boolean;
        try {
          if (!o.json)
            io.stderr(
              `worker: working ${engine.storage.location} with concurrency ${o.concurrency}${o.untilIdle ? ' until idle' : ' (Ctrl-C stops)'}\n`,
            );
          completed = await workUntil(engine, () => (o.untilIdle ? engine.isIdle() : false), run.signal);
        } finally {
          clearInterval(timer);
          off();
          await metricsServer?.close();
          metrics?.close();
        }
        if (o.json) json(io, { transitions, finished, elapsedMs: Date.now() - t0, interrupted: !completed });
        else io.stderr(`${summary()} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
        run.exitCode = completed ? ExitCode.OK : ExitCode.INTERRUPTED;
      },
      { concurrency: o.concurrency, ...retentionOptions(o) },
    );
  });

  common(
    program
      .command('demo')
      .description('run the examples: an OTA fleet upgrade, a purchase approval and a CSV pipeline, with a summary')
      .option('--devices <n>', 'devices in the simulated fleet', positiveInt('--devices'), 20),
  ).action(async (o: CommonOptions & { devices: number }) => {
    probeDatabase(o.db);
    const { runExamples } = await import('../../../examples/run-examples');
    const { exitCode, summary } = await runExamples({
      db: o.db,
      synchronous: o.sync === 'normal' ? 'NORMAL' : 'FULL',
      devices: o.devices,
      progress: o.json ? undefined : (line) => io.stderr(`${line}\n`),
      signal: run.signal,
    });
    if (o.json) json(io, summary);
    else io.stdout(summary.report);
    run.exitCode = exitCode;
  });
}
