/** Workflow commands: `validate`, `deploy` and `export`. */
import path from 'node:path';
import type { Command } from 'commander';
import { EngineError } from '../../errors';
import { exitCodeForError } from '../exit-codes';
import { checkOutputFile, writeOutputFile } from '../files';
import { loadRegistry, readWorkflowFile, rehearse, withHost } from '../host';
import { common, positiveInt, type CliRun, type CommonOptions } from '../options';
import { json, problemsOf } from '../output';

/** Adds `validate`, `deploy` and `export` to `program`. */
export function addWorkflowCommands(program: Command, run: CliRun): void {
  const { io } = run;

  common(
    program
      .command('validate')
      .argument('<file>', 'workflow file (JSON or YAML)')
      .description('check a workflow file and print every problem'),
  ).action(async (file: string, o: CommonOptions) => {
    const registry = await loadRegistry(o.plugin);
    try {
      const { definition } = await rehearse(registry, io, (call) => readWorkflowFile(file, call));
      const nodes = definition.nodes.length;
      const edges = definition.edges?.length ?? 0;
      if (o.json) json(io, { ok: true, name: definition.name, nodes, edges, problems: [] });
      else io.stdout(`${file}: valid workflow "${definition.name}" (${nodes} nodes, ${edges} edges)\n`);
    } catch (err) {
      if (o.json && err instanceof EngineError && err.code === 'INVALID_WORKFLOW') {
        // The report is the answer (exit 2): the problems are not printed a second time as an error.
        json(io, { ok: false, problems: problemsOf(err) ?? [{ code: 'SYNTAX', message: err.message, path: [] }] });
        run.exitCode = exitCodeForError(err);
        return;
      }
      throw err;
    }
  });

  common(
    program
      .command('deploy')
      .argument('<file>', 'workflow file (JSON or YAML)')
      .description('save a workflow (a new version only when it changed)'),
  ).action(async (file: string, o: CommonOptions) => {
    const registry = await loadRegistry(o.plugin);
    // Checked in memory first: an invalid file leaves no database and no row behind.
    const { definition } = await rehearse(registry, io, async (call) => {
      const wf = await readWorkflowFile(file, call);
      await call('workflow:save', { definition: wf.definition });
      return wf;
    });
    await withHost(
      o,
      io,
      'create',
      async ({ call }) => {
        const r = await call('workflow:save', { definition });
        if (o.json) json(io, r);
        else
          io.stdout(
            r.created
              ? `deployed ${r.name} v${r.version}\n`
              : r.uiUpdated
                ? `${r.name} v${r.version}: definition unchanged (no new version); its designer positions (ui) were updated\n`
                : `${r.name} v${r.version} is unchanged (no new version)\n`,
          );
      },
      {},
      registry,
    );
  });

  common(
    program
      .command('export')
      .argument('<workflow>', 'workflow name')
      .description('print a workflow version as DSL JSON (lossless; ui positions included)')
      .option('--version <n>', 'workflow version (default: the latest)', positiveInt('--version'))
      .option('-o, --output <file>', 'write to this file instead of stdout'),
  ).action(async (name: string, o: CommonOptions & { version?: number; output?: string }) => {
    if (o.output !== undefined) checkOutputFile(o.output);
    const exported = await withHost(o, io, 'read', ({ call }) => call('workflow:export', { name, version: o.version, format: 'json' }));
    if (o.output === undefined) return io.stdout(exported.text);
    await writeOutputFile(o.output, exported.text);
    if (o.json) json(io, { name: exported.name, version: exported.version, file: path.resolve(o.output) });
    else io.stdout(`exported ${exported.name} v${exported.version} to ${o.output}\n`);
  });
}
