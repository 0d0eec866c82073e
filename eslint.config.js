// Type-aware lint for the whole repository (STYLE.md habit 9).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['node_modules/', '.tsbuild/', 'dist/', 'dist-electron/', 'release/', 'coverage/', 'bench/results/'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // engine/dsl is shared with the renderer: nothing from Node may enter it.
    files: ['engine/dsl/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['node:*', 'fs', 'path', 'os', 'crypto', 'better-sqlite3', '../db/*', '../runtime/*', '../nodes/*'], message: 'engine/dsl must not import Node or engine internals (the renderer reuses it).' }] },
      ],
    },
  },
  {
    // The built-in types' config modules are shared with the renderer (engine/nodes/builtin-configs):
    // zod, acorn and the engine's error class only, never Node, the sandbox or the thread pool.
    files: ['engine/nodes/builtin-configs.ts', 'engine/nodes/script-config.ts', 'engine/nodes/http-config.ts', 'engine/nodes/pass.ts', 'engine/nodes/delay.ts', 'engine/nodes/approval.ts', 'engine/nodes/control-flow-config.ts', 'engine/nodes/types.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['node:*', 'fs', 'path', 'os', 'crypto', 'better-sqlite3', 'quickjs-emscripten', '../db/*', '../runtime/*', './registry', './thread-pool', './script', './script-sandbox', './script-heap', './http', './abort'], message: 'The built-in config modules are shared with the renderer: no Node, sandbox or handler code.' }] },
      ],
    },
  },
  {
    // The CLI is a host like the other two: data goes through the contract's dispatch and the
    // Engine's public API (engine/api), never SQL of its own or the runtime's internals.
    files: ['engine/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['better-sqlite3', '**/db/repositories/*', '**/runtime/*'], message: 'engine/cli reaches the engine through engine/api (dispatch, Engine) and engine/db/open-database only.' }] },
      ],
    },
  },
  {
    // The API contract (and its parts) is imported by the renderer: zod and type-only DSL imports only.
    files: ['engine/api/contract.ts', 'engine/api/schemas.ts', 'engine/api/fields.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['node:*', 'fs', 'path', 'os', 'crypto', 'better-sqlite3', '../db/*', '../runtime/*', '../nodes/*', '../errors', './handlers', './event-batcher', './index'], message: 'engine/api/contract.ts and its parts must not import Node or engine runtime code (the renderer imports them).' }] },
      ],
    },
  },
  {
    // The renderer runs in a browser page (or Electron's sandboxed renderer): browser globals, and
    // no Node, Electron or engine runtime code. It reaches the engine only through
    // src/api/client.ts and the contract's types (DESIGN.md section 1).
    files: ['renderer/src/**/*.ts', 'renderer/src/**/*.tsx'],
    languageOptions: {
      globals: {
        window: 'readonly',
        document: 'readonly',
        navigator: 'readonly',
        console: 'readonly',
        fetch: 'readonly',
        EventSource: 'readonly',
        sessionStorage: 'readonly',
        URL: 'readonly',
        Blob: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'The renderer reaches Electron only through window.runnel (src/api/client.ts).' }],
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'os', 'crypto', 'better-sqlite3', '**/engine/db/**', '**/engine/runtime/**', '**/engine/nodes/**', '!**/engine/nodes/builtin-configs', '**/engine/api/handlers', '**/engine/api/event-batcher', '**/engine/api/index', '**/electron/main/**', '**/server/**'],
              message: 'The renderer may import only the API contract, engine/dsl, engine/nodes/builtin-configs and electron/shared (plus the preload bridge type).',
            },
          ],
        },
      ],
    },
  },
  {
    // Code that tests or plain Node load must never import `electron`: without its binary (never
    // downloaded here) the import throws. Only these thin modules may: main.ts, window.ts,
    // ipc-main.ts, menu.ts, preload.ts.
    files: ['test/**/*.ts', 'electron/shared/**/*.ts', 'electron/preload/bridge.ts', 'electron/preload/api.ts', 'electron/build.ts', 'electron/dist.ts', 'electron/main/*.ts'],
    ignores: ['electron/main/main.ts', 'electron/main/window.ts', 'electron/main/ipc-main.ts', 'electron/main/menu.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'electron', message: 'Keep electron out of modules that tests or Node load; put the logic in a pure module and wire it in main.ts / window.ts / ipc-main.ts / menu.ts.', allowTypeImports: false }] }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
