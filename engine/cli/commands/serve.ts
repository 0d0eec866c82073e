/** The browser host command: `serve`. */
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import type { Engine } from '../../api';
import { EngineError } from '../../errors';
import { ExitCode } from '../exit-codes';
import { openHost } from '../host';
import { common, portNumber, type CliRun, type CommonOptions } from '../options';
import { retentionFlags, retentionOptions, type RetentionFlags } from '../retention-options';
import { json, type CliIo } from '../output';

/**
 * What `runnel serve` uses of server/index.ts. The server is its own TypeScript project that
 * builds on this one, so it is loaded at run time; test/unit/api/contract-types.test.ts checks
 * that it satisfies this.
 */
export interface ServeModule {
  startServer(options: { engine: Engine; port?: number }): Promise<{ url: string; port: number; token: string; close(): Promise<void> }>;
}

const SERVER_MODULE = new URL('../../../server/index.ts', import.meta.url).href;

/** Opens `url` in the system browser; failing to is only a warning. */
function openBrowser(url: string, io: CliIo): void {
  const [cmd, args]: [string, string[]] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  const warn = (why: string) => io.stderr(`warning: could not open a browser (${why}); open the URL above yourself\n`);
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
    child.on('error', (err) => warn(err.message));
    child.unref();
  } catch (err) {
    warn((err as Error).message);
  }
}

/** Adds `serve` to `program`. */
export function addServeCommands(program: Command, run: CliRun): void {
  const { io } = run;
  common(
    retentionFlags(program
      .command('serve')
      .description(
        'serve the app to a browser: the API and the built renderer on 127.0.0.1 with a per-run token, plus the worker loop (until Ctrl-C)',
      )
      .option('--port <n>', 'TCP port on 127.0.0.1 (0 picks a free one)', portNumber, 0)
      .option('--open', 'open the app in the system browser'), true),
  ).action(async (o: CommonOptions & RetentionFlags & { port: number; open?: boolean }) => {
    // The server builds its own handlers over the engine and dispatches every call.
    const { engine } = await openHost(o, io, 'create', retentionOptions(o));
    let server: Awaited<ReturnType<ServeModule['startServer']>>;
    try {
      const { startServer } = (await import(SERVER_MODULE)) as ServeModule;
      server = await startServer({ engine, port: o.port });
    } catch (err) {
      await engine.close();
      if ((err as { code?: unknown }).code === 'EADDRINUSE') {
        throw new EngineError('CONFLICT', `port ${o.port} on 127.0.0.1 is in use (pick another with --port, or 0)`, { kind: 'user' });
      }
      throw err;
    }
    if (o.json) json(io, { url: server.url, port: server.port, token: server.token, db: engine.storage.location });
    else {
      io.stderr(`serve: ${engine.storage.location} on 127.0.0.1:${server.port}, worker running (Ctrl-C stops)\n`);
      io.stdout(`${server.url}\n`);
    }
    if (o.open) openBrowser(server.url, io);
    await new Promise<void>((resolve) => {
      if (run.signal.aborted) resolve();
      else run.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    // Stop serving and claiming, let running handlers finish (or release their leases), then
    // checkpoint and close the file.
    try {
      await server.close();
    } finally {
      await engine.close();
    }
    if (!o.json) io.stderr('serve: stopped\n');
    // Like `worker`, serve ends only by a signal: 130 (engine/cli/exit-codes.ts).
    run.exitCode = ExitCode.INTERRUPTED;
  });
}
