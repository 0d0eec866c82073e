/** The `copy` command: a whole database from one backend to another (engine/db/copy.ts). */
import type { Command } from 'commander';
import { copyDatabase } from '../../db/copy';
import type { CliRun } from '../options';
import { json } from '../output';

/** Adds `copy --from SRC --to DEST` to `program`. */
export function addCopyCommand(program: Command, run: CliRun): void {
  const { io } = run;
  program
    .command('copy')
    .description('copy a whole database (workflows, instances, history, ids kept) into a new one: a SQLite file or a postgres:// URL, either way; refused while workers hold leases on the source (stop them first) or when the target holds anything')
    .requiredOption('--from <db>', 'the source: a database file or a postgres:// URL')
    .requiredOption('--to <db>', 'the target, empty or new: a database file or a postgres:// URL')
    .option('--json', 'machine-readable output on stdout (no progress)')
    .action(async (o: { from: string; to: string; json?: boolean }) => {
      let shown = '';
      const result = await copyDatabase(o.from, o.to, {
        progress: o.json
          ? undefined
          : (table, done, total) => {
              const line = `copy: ${table} ${done}/${total}`;
              if (line !== shown && (done === total || done % 5000 === 0)) io.stderr(`${line}\n`);
              shown = line;
            },
      });
      if (o.json) json(io, result);
      else {
        const counts = Object.entries(result.rows)
          .map(([t, n]) => `${n} ${t}`)
          .join(', ');
        io.stdout(`copied ${result.from} → ${result.to} in ${(result.elapsedMs / 1000).toFixed(1)} s: ${counts}\n`);
      }
    });
}
