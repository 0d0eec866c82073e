/**
 * The committed schema snapshot (test/fixtures/schema.sql) is what a fresh file gets from the
 * migrations, so every schema change shows in review as a change of that file
 * (scripts/schema-snapshot.ts; graphile-worker's committed dump).
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../../engine/db/migrations/index';
import { freshSchemaSnapshot, SCHEMA_SNAPSHOT_COMMAND, SCHEMA_SNAPSHOT_FILE } from '../../../scripts/schema-snapshot';

describe('the schema snapshot', () => {
  it('test/fixtures/schema.sql is the schema of a fresh file', () => {
    const committed = fs.readFileSync(SCHEMA_SNAPSHOT_FILE, 'utf8');
    expect(
      freshSchemaSnapshot(),
      `test/fixtures/schema.sql differs from the schema the migrations give a fresh file. If a migration changed the schema on purpose, run \`${SCHEMA_SNAPSHOT_COMMAND}\` and commit the file with it.`,
    ).toBe(committed);
  });

  it('names the current schema version and the tables, indexes, views and triggers in a stable order', () => {
    const text = freshSchemaSnapshot();
    expect(text).toContain(`PRAGMA user_version = ${SCHEMA_VERSION};`);
    const objects = [...text.matchAll(/^-- (table|index|view|trigger) (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect(objects.filter((o) => o.startsWith('table '))).toEqual([
      'table change_consumer',
      'table child',
      'table dead_letter',
      'table event',
      'table history',
      'table history_state',
      'table id_floor',
      'table instance',
      'table node',
      'table node_state',
      'table schedule',
      'table workflow',
      'table workflow_schedule',
    ]);
    const kinds = objects.map((o) => o.split(' ')[0]);
    expect(kinds).toEqual([...kinds].sort((a, b) => ['table', 'index', 'view', 'trigger'].indexOf(a!) - ['table', 'index', 'view', 'trigger'].indexOf(b!)));
    expect(freshSchemaSnapshot()).toBe(text);
  });
});
