/**
 * The renderer's entry: builds the API client (Electron IPC or HTTP, picked once), the stores
 * over it with every failed call reported as a toast, and renders the app.
 */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { createApiClient, withErrorReporting } from './api/client';
import { browserFiles } from './browser-files';
import { StoresContext } from './hooks';
import { createAppStores } from './stores/app-stores';
import { createUiStore } from './stores/ui-store';
import './styles.css';

const ui = createUiStore();
const api = withErrorReporting(createApiClient(), (channel, error) => ui.getState().pushToast({ channel, code: error.code, message: error.message }));
const stores = createAppStores(api, ui);

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <StoresContext.Provider value={stores}>
      <App files={browserFiles} />
    </StoresContext.Provider>
  </StrictMode>,
);
