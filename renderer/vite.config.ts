/**
 * Vite config of the renderer: root `renderer/`, output `dist/renderer/` with relative asset URLs
 * (`base: './'`), so the same build loads from the desktop app's `app://runnel/` and from the
 * browser host's `http://127.0.0.1:<port>/`.
 *
 * `npm run dev:renderer` serves it with hot reload; API calls go to the browser host named by
 * `RUNNEL_API` (default `http://127.0.0.1:4000`: `runnel serve --port 4000`). The proxy presents
 * itself as that host (Host and Origin), so the host's DNS-rebinding and CSRF checks pass; the
 * page still needs the host's `?token=`.
 */
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const api = process.env.RUNNEL_API ?? 'http://127.0.0.1:4000';

export default defineConfig({
  root,
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/renderer', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    chunkSizeWarningLimit: 1500,
  },
  server: {
    host: '127.0.0.1',
    proxy: {
      '/api': {
        target: api,
        changeOrigin: true,
        configure: (proxy) => {
          proxy.on('proxyReq', (req) => {
            if (req.getHeader('origin') !== undefined) req.setHeader('origin', new URL(api).origin);
          });
        },
      },
    },
  },
});
