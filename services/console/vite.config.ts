import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The web console: a single-page app built into `dist/console` (the API serves it at `/`). Everything it needs is in the
 * bundle (no CDN, no outside fonts), so it works on an offline control-plane network.
 */
export default defineConfig({
  root: fileURLToPath(new URL('./app', import.meta.url)),
  base: '/',
  plugins: [react()],
  publicDir: false,
  // The live-events shared worker (`app/src/live/liveWorker.ts`) is a module worker, bundled apart from the page.
  worker: { format: 'es' },
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // No source map: served, it would hand anyone the whole source (1.4 MB) next to a 123 KB bundle (gzipped).
    sourcemap: false,
    chunkSizeWarningLimit: 1024,
  },
});
