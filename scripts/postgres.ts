/**
 * Where this machine's PostgreSQL server binaries are, for the tests' throwaway clusters
 * (test/helpers/pg-cluster.ts) and `npm run ensure:postgres` (scripts/ensure-postgres.ts).
 */
import fs from 'node:fs';
import path from 'node:path';

/** Where initdb and pg_ctl are: RUNNEL_TEST_PG_BIN, Debian's PostgreSQL 15, any other Debian version, else PATH (''). */
export function pgBinDir(): string {
  const given = process.env.RUNNEL_TEST_PG_BIN;
  if (given) return given;
  const debian = '/usr/lib/postgresql/15/bin';
  if (fs.existsSync(path.join(debian, 'initdb'))) return debian;
  const versions = fs.existsSync('/usr/lib/postgresql') ? fs.readdirSync('/usr/lib/postgresql') : [];
  for (const v of versions.sort((a, b) => Number(b) - Number(a))) {
    const dir = path.join('/usr/lib/postgresql', v, 'bin');
    if (fs.existsSync(path.join(dir, 'initdb'))) return dir;
  }
  return '';
}
