import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The console is a static build served by the server at `/` (the API stays its only backend).
// `npm run build` writes it to dist/console, next to the server's build.
const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    // No source maps in what the server serves: the repository has the sources.
    sourcemap: false,
    // The call page's chunk carries ECharts (~520 kB, loaded only when a call is opened).
    chunkSizeWarningLimit: 600,
    rolldownOptions: {
      // react-router marks its modules "use client" (for React Server Components); meaningless in a browser bundle.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  // `npm run console:dev` proxies the API to a server on :3000, so the page and the API share an origin as in production.
  server: { proxy: { '/v1': 'http://localhost:3000', '/console': 'http://localhost:3000' } },
});
