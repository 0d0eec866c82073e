/**
 * Handlers of the desktop-only channels (`file:openWorkflow`, `file:saveWorkflow`, `app:openDatabase`, `app:info`, `app:notify`)
 * over injected dialogs and file access, and their dispatcher (parse first, errors as data).
 *
 * No `electron` import: `main.ts` passes `dialog.showOpenDialog` and friends bound to the window;
 * tests pass fakes.
 */
import path from 'node:path';
import { err, LIMITS, ok, type Result } from '../../engine/api/contract';
import { EngineError } from '../../engine/errors';
import { desktopContract, isDesktopChannel, type DesktopHandlers } from '../shared/desktop-contract';

/** What the desktop handlers need from the outside world. */
export interface DesktopDeps {
  /** The native Open dialog; resolves with the chosen path, or undefined when cancelled. */
  chooseOpenPath(options: { title: string; filters: { name: string; extensions: string[] }[] }): Promise<string | undefined>;
  /** The native Save dialog; resolves with the chosen path, or undefined when cancelled. */
  chooseSavePath(options: { title: string; defaultPath: string; filters: { name: string; extensions: string[] }[] }): Promise<string | undefined>;
  /** Reads a file as UTF-8 (fs.promises.readFile). */
  readText(file: string): Promise<string>;
  /** Size of a file in bytes (fs.promises.stat). */
  fileSize(file: string): Promise<number>;
  /** Writes UTF-8 text (fs.promises.writeFile). */
  writeText(file: string, text: string): Promise<void>;
  /** The database in use. */
  dbPath(): string;
  /**
   * Restarts the engine on `location` (a file or a PostgreSQL URL), reopening the previous one
   * on failure; resolves with where it is now (a URL without its password).
   *
   * @throws the engine's open error (an EngineError with its code).
   */
  openDatabase(location: string): Promise<string>;
  /** `app.getVersion()`. */
  version: string;
  /** `process.platform`. */
  platform: string;
  /** Shows an OS notification; resolves true when it was clicked. Absent: notifications are off. */
  notify?(notification: { title: string; body: string }): Promise<boolean>;
}

/** The workflow file filters of both dialogs. */
export const WORKFLOW_FILE_FILTERS = [
  { name: 'Workflow (JSON or YAML)', extensions: ['json', 'yaml', 'yml'] },
  { name: 'All files', extensions: ['*'] },
];

/** A failure with an API error code, thrown by desktop handlers and made data by the dispatcher. */
export class DesktopError extends Error {
  /** An `ApiErrorCodes` value. */
  readonly code: 'BAD_REQUEST' | 'INTERNAL' | 'NOT_FOUND';

  constructor(code: DesktopError['code'], message: string) {
    super(message);
    this.name = 'DesktopError';
    this.code = code;
  }
}

/** The desktop handlers over `deps`. */
export function createDesktopHandlers(deps: DesktopDeps): DesktopHandlers {
  return {
    'file:openWorkflow': async () => {
      const file = await deps.chooseOpenPath({ title: 'Open workflow', filters: WORKFLOW_FILE_FILTERS });
      if (file === undefined) return { canceled: true as const };
      const size = await deps.fileSize(file);
      if (size > LIMITS.definitionBytes) {
        throw new DesktopError('BAD_REQUEST', `${path.basename(file)} is ${size} bytes, above the limit of ${LIMITS.definitionBytes}`);
      }
      return { canceled: false as const, path: file, fileName: path.basename(file), text: await deps.readText(file) };
    },
    'file:saveWorkflow': async (input) => {
      const file = await deps.chooseSavePath({ title: 'Export workflow', defaultPath: path.basename(input.suggestedName), filters: WORKFLOW_FILE_FILTERS });
      if (file === undefined) return { canceled: true as const };
      await deps.writeText(file, input.text);
      return { canceled: false as const, path: file };
    },
    'app:openDatabase': async ({ location }) => ({ location: await deps.openDatabase(location) }),
    'app:info': () => Promise.resolve({ dbPath: deps.dbPath(), version: deps.version, platform: deps.platform }),
    'app:notify': async (input) => ({ clicked: deps.notify ? await deps.notify(input) : false }),
  };
}

/**
 * Parses `payload` with the desktop channel's schema, then runs its handler; never throws.
 * BAD_REQUEST names the first failing field; file-system errors become INTERNAL with their message.
 */
export async function dispatchDesktop(handlers: DesktopHandlers, channel: string, payload: unknown): Promise<Result<unknown>> {
  if (!isDesktopChannel(channel)) return err('UNKNOWN_CHANNEL', `unknown channel "${channel.slice(0, 100)}"`);
  const parsed = desktopContract[channel].input.safeParse(payload);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first && first.path.length > 0 ? first.path.map(String).join('.') : '(input)';
    return err('BAD_REQUEST', `${channel}: ${where}: ${first?.message ?? 'invalid input'}`, { channel, issues: parsed.error.issues });
  }
  try {
    return ok(await (handlers[channel] as (input: unknown) => Promise<unknown>)(parsed.data));
  } catch (error) {
    if (error instanceof DesktopError) return err(error.code, error.message);
    // The engine's own errors (opening a database) keep their code.
    if (error instanceof EngineError) return err(error.code, error.message);
    return err('INTERNAL', `${channel}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
