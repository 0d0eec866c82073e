/**
 * Child process for the read-only database tests: opens a database file without options (so the
 * engine must notice by itself that it cannot write) and prints one JSON line of what happened.
 * Tests run it as an unprivileged user, since root ignores file modes.
 *
 * Usage: node --import tsx test/helpers/readonly-probe.ts <file> [instanceId]
 */
import { SqliteEngine } from '../../engine/runtime/engine';
import { EngineError } from '../../engine/errors';

const [file, id] = process.argv.slice(2);
let out: Record<string, unknown>;
try {
  const engine = SqliteEngine.open(file ?? '');
  out = { readonly: engine.db.readonly, status: (await engine.getInstance(Number(id))).status };
  try {
    await engine.start('ro');
    out.startCode = 'none';
  } catch (err) {
    out.startCode = err instanceof EngineError ? err.code : String(err);
  }
  await engine.close();
} catch (err) {
  out = { openCode: err instanceof EngineError ? err.code : 'NOT_ENGINE_ERROR', message: (err as Error).message };
}
process.stdout.write(`${JSON.stringify(out)}\n`);
