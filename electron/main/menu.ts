/**
 * Installs the application menu built by `menu-template.ts`.
 */
import { Menu } from 'electron';
import { buildMenuTemplate, type MenuActions, type MenuOptions } from './menu-template';

/** Builds the template and sets it as the application menu. */
export function installMenu(actions: MenuActions, options: MenuOptions): void {
  Menu.setApplicationMenu(Menu.buildFromTemplate(buildMenuTemplate(actions, options)));
}
