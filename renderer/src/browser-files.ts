/**
 * File access in a browser: a file picker (a transient `<input type=file>`) and a download (a
 * blob URL on a transient link). The desktop app uses native dialogs instead (`commands.ts`).
 */
import type { FileAccess } from './commands';

/** Workflow file types the picker offers. */
const ACCEPT = '.json,.yaml,.yml,application/json,application/yaml,text/yaml';

/** {@link FileAccess} over the page's DOM. */
export const browserFiles: FileAccess = {
  pickWorkflowFile: () =>
    new Promise((resolve) => {
      const input = document.createElement('input');
      input.type = 'file';
      input.accept = ACCEPT;
      input.addEventListener('change', () => {
        const file = input.files?.[0];
        if (!file) {
          resolve(undefined);
          return;
        }
        file.text().then(
          (text) => resolve({ text, fileName: file.name }),
          () => resolve(undefined),
        );
      });
      input.addEventListener('cancel', () => resolve(undefined));
      input.click();
    }),
  saveFile: (fileName, text) => {
    const url = URL.createObjectURL(new Blob([text], { type: fileName.endsWith('.json') ? 'application/json' : 'text/yaml' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = fileName;
    link.rel = 'noopener';
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    return Promise.resolve();
  },
};
