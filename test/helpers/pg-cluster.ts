/**
 * A throwaway PostgreSQL cluster for a test run (../shared/research/toolchain.md section 7):
 * `initdb` into a temp dir, started on 127.0.0.1 only on a free port with durability off by default
 * (fsync=off: the functional suite never claims durability; the bench asks for it on), stopped and
 * removed at the end.
 *
 * The server refuses to run as root, and CI runs as root: then every server command runs as the
 * `postgres` user through `su postgres -c` (the temp dir is handed to that user). As any other
 * user the commands run directly. The binaries are Debian's (`/usr/lib/postgresql/15/bin`, which
 * `.ci/run` installs), or the directory `RUNNEL_TEST_PG_BIN` names, or `initdb`/`pg_ctl` on PATH.
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pgBinDir } from '../../scripts/postgres';

export { pgBinDir };

const run = promisify(execFile);

/** A running cluster. */
export interface PgCluster {
  /** Superuser URL of its `postgres` database: `postgres://runnel@127.0.0.1:<port>/postgres` (trust auth, no password). */
  url: string;
  /** The temp dir holding the data directory, the socket and the server log. */
  dir: string;
  /** Stops the server (`pg_ctl -m fast stop`) and removes `dir`. Safe to call twice. */
  stop(): Promise<void>;
  /** The same, synchronously (for a process `exit` handler). */
  stopSync(): void;
}


/** `s` as one word for `sh -c`. */
function shellWord(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** `argv` as the cluster's owner: directly, or through `su postgres -c` when this process is root. */
function ownerCommand(argv: string[]): [string, string[]] {
  if (!asRoot) return [argv[0] as string, argv.slice(1)];
  return ['su', ['postgres', '-c', argv.map(shellWord).join(' ')]];
}

async function asOwner(argv: string[]): Promise<void> {
  const [cmd, args] = ownerCommand(argv);
  await run(cmd, args, { maxBuffer: 16 * 1024 * 1024 });
}

/** A TCP port nobody listens on at 127.0.0.1 right now. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Server settings of the test suite: durability off (the functional suite never claims it). */
export const TEST_PG_SETTINGS: readonly string[] = ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off'];

/**
 * Server settings for figures that claim durability (bench/postgres-*.ts): every commit waits for
 * its WAL to reach the disk, as a production server's default does.
 */
export const DURABLE_PG_SETTINGS: readonly string[] = ['fsync=on', 'synchronous_commit=on', 'full_page_writes=on'];

/** Options of {@link startPgCluster}. */
export interface PgClusterOptions {
  /** `name=value` server settings passed as `-c` (default {@link TEST_PG_SETTINGS}). */
  settings?: readonly string[];
  /** Addresses the server listens on (default only 127.0.0.1, which stays the URL's host). */
  listenAddresses?: readonly string[];
  /** Networks (CIDR, e.g. `10.231.0.0/16`) whose clients are trusted, on top of loopback. */
  trustNetworks?: readonly string[];
}

/**
 * Creates and starts a cluster (about 2 s). The superuser is `runnel`, authentication is trust,
 * the encoding UTF8 with the C locale.
 *
 * @throws Error when the binaries are missing (the message says how to install them) or the
 *   server does not start (the message carries the end of its log).
 */
export async function startPgCluster(options: PgClusterOptions = {}): Promise<PgCluster> {
  const settings = options.settings ?? TEST_PG_SETTINGS;
  const bin = pgBinDir();
  const tool = (name: string) => (bin === '' ? name : path.join(bin, name));
  if (bin === '' && !commandExists('initdb')) {
    throw new Error(
      'PostgreSQL is not installed: no /usr/lib/postgresql/15/bin/initdb and no initdb on PATH. ' +
        'Install it (Debian: apt-get install -y postgresql), set RUNNEL_TEST_PG_BIN to its bin directory, ' +
        'or point RUNNEL_TEST_PG_URL at a server whose user may create databases.',
    );
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runnel-pg-'));
  if (asRoot) execFileSync('chown', ['postgres', dir]);
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  let stopped = false;
  const stopArgs = [tool('pg_ctl'), '-D', data, '-m', 'fast', '-w', 'stop'];
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  const cluster: PgCluster = {
    url: '',
    dir,
    async stop() {
      if (stopped) return;
      stopped = true;
      await asOwner(stopArgs).catch(() => undefined);
      remove();
    },
    stopSync() {
      if (stopped) return;
      stopped = true;
      try {
        const [cmd, args] = ownerCommand(stopArgs);
        execFileSync(cmd, args, { stdio: 'ignore' });
      } catch {
        // Not running (it failed to start, or was stopped from outside).
      }
      remove();
    },
  };
  try {
    await asOwner([tool('initdb'), '-D', data, '-A', 'trust', '-U', 'runnel', '-E', 'UTF8', '--locale=C', '--no-sync']);
    if (options.trustNetworks?.length) {
      // Appended as the owner would: the file stays the owner's (root writes it in place).
      fs.appendFileSync(path.join(data, 'pg_hba.conf'), options.trustNetworks.map((n) => `host all all ${n} trust\n`).join(''));
    }
    const listen = (options.listenAddresses ?? ['127.0.0.1']).join(',');
    // A free port may be taken between the probe and the server's bind: try a few.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const options = [
        `-p ${port}`,
        `-k ${dir}`,
        `-c listen_addresses=${listen}`,
        ...settings.map((setting) => `-c ${setting}`),
        '-c max_connections=400',
      ].join(' ');
      try {
        await asOwner([tool('pg_ctl'), '-D', data, '-l', log, '-w', '-t', '60', '-o', options, 'start']);
        cluster.url = `postgres://runnel@127.0.0.1:${port}/postgres`;
        return cluster;
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
  } catch (err) {
    const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').slice(-20).join('\n') : '';
    cluster.stopSync();
    throw new Error(`could not start a PostgreSQL test cluster: ${(err as Error).message}${tail ? `\nserver log:\n${tail}` : ''}`, { cause: err });
  }
}

/** Whether {@link startPgCluster} can find `initdb` (see {@link pgBinDir}). */
export function pgInstalled(): boolean {
  const bin = pgBinDir();
  return bin === '' ? commandExists('initdb') : fs.existsSync(path.join(bin, 'initdb'));
}

function commandExists(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${shellWord(name)}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
