/** The database command: `init`. */
import type { Command } from 'commander';
import { openDatabase, probeDatabase } from '../../db/open-database';
import { SCHEMA_VERSION } from '../../db/migrations/index';
import { isPostgresUrl } from '../../db/postgres/errors';
import { migratePostgres, PG_SCHEMA_VERSION } from '../../db/postgres/migrations/index';
import { openPostgresStorage } from '../../db/postgres/storage';
import { common, type CliRun, type CommonOptions } from '../options';
import { json } from '../output';

/** Adds `init` to `program`. */
export function addDatabaseCommands(program: Command, run: CliRun): void {
  const { io } = run;
  common(program.command('init').description('create (or migrate) the database: a file, or the schema in a PostgreSQL database')).action(async (o: CommonOptions) => {
    if (isPostgresUrl(o.db)) {
      // The database must exist on the server (Runnel creates its tables, never the database).
      const storage = openPostgresStorage(o.db, { migrate: false, ...(o.readOnly ? { readonly: true } : {}) });
      let created = false;
      try {
        if (!o.readOnly) {
          created = storage.bridge.query<{ p: boolean }>(`SELECT to_regclass('runnel_schema') IS NULL AS p`).rows[0]?.p === true;
          migratePostgres((sql, params) => storage.bridge.query(sql, params), storage.location);
        }
      } finally {
        await storage.close();
      }
      const at = storage.location;
      if (o.json) json(io, { file: at, schemaVersion: PG_SCHEMA_VERSION, created });
      else io.stdout(created ? `created the Runnel schema in ${at} (schema version ${PG_SCHEMA_VERSION})\n` : `${at} is a Runnel database (schema version ${PG_SCHEMA_VERSION})\n`);
      return;
    }
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
