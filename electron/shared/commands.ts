/**
 * Commands the desktop shell sends to the renderer (from the app menu and its shortcuts). They
 * travel main → renderer only, over the preload's `onCommand`; the browser host has no menu, so
 * the renderer offers the same actions as buttons there.
 *
 * Pure data: imported by main, by the preload (bundled) and, as types, by the renderer.
 */

/** Every command, with what the renderer does on it. */
export const DESKTOP_COMMANDS = [
  /** Switch to the Designer with a new, empty workflow. */
  'workflow.new',
  /** Ask for a workflow file (native dialog, `file:openWorkflow`) and import it. */
  'workflow.import',
  /** Export the selected workflow to a file (native dialog, `file:saveWorkflow`). */
  'workflow.export',
  /** Show the Designer view. */
  'view.designer',
  /** Show the Instances view. */
  'view.instances',
  /** Show the Dashboard view. */
  'view.dashboard',
  /** The database file changed (File → Open database…): reload every list. */
  'database.changed',
  /** Ask for a PostgreSQL URL and move the app onto it (File → Connect to PostgreSQL…, `app:openDatabase`). */
  'database.connect',
] as const;

/** One of {@link DESKTOP_COMMANDS}. */
export type DesktopCommand = (typeof DESKTOP_COMMANDS)[number];

/** Whether `value` is a {@link DesktopCommand} (the preload drops anything else). */
export function isDesktopCommand(value: unknown): value is DesktopCommand {
  return typeof value === 'string' && (DESKTOP_COMMANDS as readonly string[]).includes(value);
}
