/** The database command: `init`. */
import type { Command } from 'commander';
import { openDatabase, probeDatabase } from '../../db/open-database';
import { SCHEMA_VERSION } from '../../db/migrations/index';
import { common, type CliRun, type CommonOptions } from '../options';
import { json } from '../output';

/** Adds `init` to `program`. */
export function addDatabaseCommands(program: Command, run: CliRun): void {
  const { io } = run;
  common(program.command('init').description('create (or migrate) the database file')).action(async (o: CommonOptions) => {
    const { exists } = probeDatabase(o.db);
    const db = openDatabase(o.db, {
      synchronous: o.sync === 'normal' ? 'NORMAL' : 'FULL',
      ...(o.readOnly ? { readonly: true } : {}),
    });
    const file = db.file;
    db.close();
    if (o.json) json(io, { file, schemaVersion: SCHEMA_VERSION, created: !exists });
    else
      io.stdout(
        exists ? `${file} is a Runnel database (schema version ${SCHEMA_VERSION})\n` : `created ${file} (schema version ${SCHEMA_VERSION})\n`,
      );
    await Promise.resolve();
  });
}
