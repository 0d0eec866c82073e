/**
 * What the renderer does on an app-menu command (desktop) or the matching toolbar button.
 */
import type { DesktopCommand } from '../../electron/shared/commands';
import { designerStoreFor } from './designer/context';
import type { AppStores } from './stores/app-stores';

/** How files reach the user outside the desktop app (the view supplies DOM-based ones). */
export interface FileAccess {
  /** Lets the user pick a workflow file; undefined when cancelled. */
  pickWorkflowFile(): Promise<{ text: string; fileName: string } | undefined>;
  /** Hands a file to the user (a download in a browser). */
  saveFile(fileName: string, text: string): Promise<void>;
}

/**
 * Imports a workflow file: through the native dialog (`file:openWorkflow`) in the desktop app,
 * else through `files`. Returns the saved workflow's name.
 */
export async function importWorkflow(stores: AppStores, files: FileAccess): Promise<string | undefined> {
  let file: { text: string; fileName: string } | undefined;
  if (stores.api.desktop) {
    const r = await stores.api.desktop('file:openWorkflow');
    if (!r.ok || r.value.canceled) return undefined;
    file = { text: r.value.text, fileName: r.value.fileName };
  } else {
    file = await files.pickWorkflowFile();
  }
  if (!file) return undefined;
  return stores.workflows.getState().importWorkflow(file.text, file.fileName);
}

/** Exports the selected workflow: native Save dialog in the desktop app, a download elsewhere. */
export async function exportWorkflow(stores: AppStores, files: FileAccess): Promise<boolean> {
  const file = await stores.workflows.getState().exportSelected();
  if (!file) return false;
  if (stores.api.desktop) {
    const r = await stores.api.desktop('file:saveWorkflow', { suggestedName: file.fileName, text: file.text });
    return r.ok && !r.value.canceled;
  }
  await files.saveFile(file.fileName, file.text);
  return true;
}

/** Runs one app-menu command. */
export async function runCommand(command: DesktopCommand, stores: AppStores, files: FileAccess): Promise<void> {
  const ui = stores.ui.getState();
  switch (command) {
    case 'view.designer':
      ui.setView('designer');
      return;
    case 'workflow.new':
      ui.setView('designer');
      designerStoreFor(stores).getState().ask('new');
      return;
    case 'view.instances':
      ui.setView('instances');
      return;
    case 'view.dashboard':
      ui.setView('dashboard');
      return;
    // In the Designer these act on the drawing (saved or not); elsewhere on saved workflows.
    case 'workflow.import':
      if (ui.view === 'designer') designerStoreFor(stores).getState().ask('import');
      else await importWorkflow(stores, files);
      return;
    case 'workflow.export':
      if (ui.view === 'designer') designerStoreFor(stores).getState().ask('export');
      else await exportWorkflow(stores, files);
      return;
    case 'database.changed':
      // The client turns this into a resync; the stores reload there.
      return;
    case 'database.connect':
      // components/ConnectDatabase.tsx shows its dialog on this command.
      return;
  }
}
