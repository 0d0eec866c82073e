/**
 * Channels only the desktop shell has: native file dialogs and facts about the app. They extend
 * the engine contract (`engine/api/contract.ts`) in the Electron host only; the browser host has
 * no such channels (the renderer uses `<input type=file>` and downloads there).
 *
 * Same conventions as the contract: `domain:verb` names, zod `{ input, output }` schemas, results
 * as data. These handlers run in the main process (they need `dialog`), not in the engine worker.
 *
 * Pure: imported by main, by the preload (bundled) and by the renderer (types).
 */
import { z } from 'zod';
import { LIMITS, type Result } from '../../engine/api/contract';

/** Electron-only channel → `{ input, output }` schemas. */
export const desktopContract = {
  /**
   * Shows the native Open dialog for a workflow file (`.json`, `.yaml`, `.yml`) and reads it.
   * `canceled: true` when the user closed the dialog; files above 5 MiB are BAD_REQUEST.
   * The renderer passes `text` and `fileName` on to `workflow:import`.
   */
  'file:openWorkflow': {
    input: z.strictObject({}).default({}),
    output: z.union([
      z.object({ canceled: z.literal(true) }),
      z.object({ canceled: z.literal(false), path: z.string(), fileName: z.string(), text: z.string() }),
    ]),
  },
  /**
   * Shows the native Save dialog (starting at `suggestedName`) and writes `text` there.
   * `canceled: true` when the user closed the dialog.
   */
  'file:saveWorkflow': {
    input: z.strictObject({
      suggestedName: z.string().min(1).max(LIMITS.fileName),
      text: z.string().max(LIMITS.definitionBytes),
    }),
    output: z.union([z.object({ canceled: z.literal(true) }), z.object({ canceled: z.literal(false), path: z.string() })]),
  },
  /**
   * Moves the app onto another database: a SQLite file path or a `postgres://` /
   * `postgresql://` URL (File → Connect to PostgreSQL…). The engine restarts on it; on failure
   * the previous database is reopened and the error answered (its code as the engine gave it:
   * DATABASE_UNAVAILABLE, NOT_FOUND, …). Answers where it is now, a URL without its password.
   */
  'app:openDatabase': {
    input: z.strictObject({ location: z.string().trim().min(1).max(4096) }),
    output: z.object({ location: z.string() }),
  },
  /** The database file in use and the app's version (the status bar shows them). */
  'app:info': {
    input: z.strictObject({}).default({}),
    output: z.object({ dbPath: z.string(), version: z.string(), platform: z.string() }),
  },
  /**
   * Shows an OS notification (the monitor's "an instance needs a person"). Answers when the person
   * clicks it (`clicked: true`, the window comes to the front), closes it, or after a minute
   * (`clicked: false`); `clicked: false` at once where the OS has no notifications.
   */
  'app:notify': {
    input: z.strictObject({ title: z.string().min(1).max(LIMITS.id), body: z.string().max(1000) }),
    output: z.object({ clicked: z.boolean() }),
  },
} as const;

/** An Electron-only channel. */
export type DesktopChannel = keyof typeof desktopContract;

/** Every Electron-only channel. */
export const desktopChannels = Object.keys(desktopContract) as DesktopChannel[];

const desktopChannelSet: ReadonlySet<string> = new Set(desktopChannels);

/** Whether `name` is an Electron-only channel. */
export function isDesktopChannel(name: unknown): name is DesktopChannel {
  return typeof name === 'string' && desktopChannelSet.has(name);
}

/** What a caller sends on desktop channel `C`. */
export type DesktopInput<C extends DesktopChannel> = z.input<(typeof desktopContract)[C]['input']>;
/** What a desktop handler receives (defaults applied). */
export type DesktopHandlerInput<C extends DesktopChannel> = z.output<(typeof desktopContract)[C]['input']>;
/** What a desktop channel returns. */
export type DesktopOutput<C extends DesktopChannel> = z.output<(typeof desktopContract)[C]['output']>;

/** One handler per desktop channel (a missing one does not compile). */
export type DesktopHandlers = { [C in DesktopChannel]: (input: DesktopHandlerInput<C>) => Promise<DesktopOutput<C>> };

/** The caller-side call of a desktop channel: never throws. */
export type DesktopInvoke = <C extends DesktopChannel>(
  channel: C,
  ...input: undefined extends DesktopInput<C> ? [input?: DesktopInput<C>] : [input: DesktopInput<C>]
) => Promise<Result<DesktopOutput<C>>>;
