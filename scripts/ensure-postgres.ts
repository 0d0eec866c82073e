/**
 * `npm run ensure:postgres`, and part of the `pretest` of `npm test` and `npm run test:integration`
 * / `test:e2e`: makes sure the PostgreSQL backend's tests have a server to start before anything
 * runs. They start a throwaway cluster of their own (test/helpers/pg-cluster.ts) from Debian's
 * PostgreSQL binaries, or use the server `RUNNEL_TEST_PG_URL` names.
 *
 * Present (binaries found, or RUNNEL_TEST_PG_URL set): one line. Missing, as root with apt-get:
 * says so, runs `apt-get update && apt-get install -y postgresql`, and checks again. Missing
 * otherwise: one message naming the command to run, exit code 1, at once. `.ci/run` calls it too.
 */
import { spawnSync } from 'node:child_process';
import { pgBinDir } from './postgres';

const PREFIX = 'ensure-postgres:';

function hasApt(): boolean {
  return spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
}

function main(): number {
  if (process.env.RUNNEL_TEST_PG_URL) {
    console.log(`${PREFIX} using the server RUNNEL_TEST_PG_URL names`);
    return 0;
  }
  const found = pgBinDir();
  if (found !== '') {
    console.log(`${PREFIX} using ${found}`);
    return 0;
  }
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!root || !hasApt()) {
    console.error(
      `${PREFIX} PostgreSQL is not installed (no /usr/lib/postgresql/<version>/bin/initdb): run \`sudo apt-get install -y postgresql\`, ` +
        'set RUNNEL_TEST_PG_BIN to its bin directory, or point RUNNEL_TEST_PG_URL at a server whose user may create databases.',
    );
    return 1;
  }
  console.log(`${PREFIX} PostgreSQL is missing; installing Debian's postgresql (apt-get update && apt-get install -y postgresql)`);
  for (const args of [['update'], ['install', '-y', 'postgresql']]) {
    const run = spawnSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (run.status !== 0) {
      console.error(`${PREFIX} \`apt-get ${args.join(' ')}\` failed (${run.error?.message ?? `exit code ${run.status}`}); install PostgreSQL by hand.`);
      return 1;
    }
  }
  const after = pgBinDir();
  if (after === '') {
    console.error(`${PREFIX} installed, yet no initdb was found under /usr/lib/postgresql`);
    return 1;
  }
  console.log(`${PREFIX} installed ${after}`);
  return 0;
}

process.exitCode = main();
