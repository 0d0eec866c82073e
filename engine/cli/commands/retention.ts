/**
 * Commands that delete ended instances: `prune` (by the retention policies, or by age; `--dry-run`
 * says what it would delete) and `delete <id>` (one ended instance, through `instance:delete`).
 * Both go through the engine's one delete path (engine/runtime/state-machine/retention.ts).
 */
import type { Command } from 'commander';
import type { PruneReport, PurgeCounts } from '../../api';
import { withHost } from '../host';
import { common, instanceIdArg, usage, type CliRun, type CommonOptions } from '../options';
import { json, plural, Progress } from '../output';
import { olderThan, retentionFlags, retentionOptions, type RetentionFlags } from '../retention-options';

const n = (x: number) => x.toLocaleString('en-US');

/** The rows besides the instances, as a sentence's tail ("with 4 node states, 12 history rows"). */
function rowsText(d: PurgeCounts): string {
  const parts = [
    plural(d.nodeStates, 'node state'),
    plural(d.history, 'history row'),
    plural(d.schedule, 'schedule row'),
    plural(d.deadLetters, 'dead letter'),
    plural(d.events, 'event'),
  ];
  return `with ${parts.join(', ')}`;
}

/** One line of what a prune deleted (or would). */
export function pruneText(r: PruneReport): string {
  const s = r.byStatus;
  const head = `${r.dryRun ? 'would delete' : 'deleted'} ${plural(r.deleted.instances, 'instance')} (${n(s.COMPLETED)} COMPLETED, ${n(s.FAILED)} FAILED, ${n(s.CANCELLED)} CANCELLED, child instances included) ${rowsText(r.deleted)}`;
  const busy = r.heldBack - r.heldForHistory;
  const kept = [
    ...(busy > 0 ? [`${plural(busy, 'instance')} with a child instance still live or another process working on it`] : []),
    ...(r.heldForHistory > 0 ? [`${plural(r.heldForHistory, 'instance')} whose history a change-feed consumer has not read yet`] : []),
  ];
  return kept.length === 0 ? head : `${head}; kept for now, with their child instances: ${kept.join(', and ')}`;
}

/** Adds `prune` and `delete` to `program`. */
export function addRetentionCommands(program: Command, run: CliRun): void {
  const { io } = run;

  common(
    retentionFlags(
      program
        .command('prune')
        .description(
          'delete ended instances with everything they own, in small batches: by the retention policies (a workflow\'s own, else the defaults), or every ended one older than --older-than',
        )
        .option('--older-than <duration>', 'every COMPLETED, FAILED or CANCELLED instance that ended longer ago than this (30d, 12h, 90m, 2w), whatever the policies', olderThan)
        .option('--workflow <name>', 'only instances of this workflow')
        .option('--dry-run', 'say what would be deleted; delete nothing'),
      false,
    ),
  ).action(async (o: CommonOptions & RetentionFlags & { olderThan?: number; workflow?: string; dryRun?: boolean }) => {
    await withHost(
      o,
      io,
      'write',
      async ({ engine }) => {
        const progress = new Progress(io, !o.json, 1);
        const report = await engine.prune({
          ...(o.olderThan === undefined ? {} : { olderThanMs: o.olderThan }),
          ...(o.workflow === undefined ? {} : { workflow: o.workflow }),
          dryRun: o.dryRun === true,
          // Nothing deleted yet is no progress: a prune that finds nothing prints its summary only.
          onBatch: (r) => {
            if (r.deleted.instances > 0) progress.line(`prune: ${r.dryRun ? 'would delete' : 'deleted'} ${plural(r.deleted.instances, 'instance')} so far`);
          },
        });
        if (o.json) json(io, report);
        else io.stdout(`${pruneText(report)}\n`);
      },
      retentionOptions(o),
    );
  });

  common(
    program
      .command('delete')
      .argument('[id]', 'instance id', instanceIdArg)
      .description('delete one ended instance with everything it owns and the child instances it started (a live one is refused)')
      .option('--test-runs', 'instead of one instance: every ended test run (runnel run --test), with everything it owns'),
  ).action(async (id: number | undefined, o: CommonOptions & { testRuns?: boolean }) => {
    if (o.testRuns === true) {
      if (id !== undefined) throw usage('delete: give an instance id or --test-runs, not both', { flag: '--test-runs' });
      await withHost(o, io, 'write', async ({ call }) => {
        const r = await call('instance:deleteTestRuns', {});
        if (o.json) return json(io, r);
        const left = [r.live > 0 ? `${plural(r.live, 'live test run')} left (cancel ${r.live === 1 ? 'it' : 'them'} first)` : '', r.kept > 0 ? `${plural(r.kept, 'test run')} kept for a change-feed consumer` : '']
          .filter((x) => x !== '')
          .join('; ');
        io.stdout(`deleted ${plural(r.runs, 'test run')}${r.runs > 0 ? ` (${rowsText(r.deleted)})` : ''}${left === '' ? '' : `; ${left}`}\n`);
      });
      return;
    }
    if (id === undefined) throw usage('delete: give an instance id, or --test-runs', { flag: 'id' });
    await withHost(o, io, 'write', async ({ call }) => {
      const r = await call('instance:delete', { id });
      if (o.json) json(io, r);
      else io.stdout(`instance ${id}: deleted ${r.deleted.instances > 1 ? `with ${plural(r.deleted.instances - 1, 'child instance')} ` : ''}${rowsText(r.deleted)}\n`);
    });
  });
}
