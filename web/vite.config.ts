import { defineConfig } from 'vite'

// The console's build (React, JSX through Vite's own transform): web/dist, served by the
// service at `/` under a strict CSP — no inline script or style, nothing from another
// origin — so nothing is inlined as a data: URL, and no module-preload polyfill is injected.
export default defineConfig({
  root: new URL('.', import.meta.url).pathname,
  base: '/',
  publicDir: 'public',
  // One React: the test runner (tap, through ink) keeps React 18 at the root of node_modules,
  // the console's 19 lives in web/node_modules; every import resolves to the console's.
  resolve: { dedupe: ['react', 'react-dom', 'react/jsx-runtime', 'scheduler'] },
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
    chunkSizeWarningLimit: 500
  },
  server: { fs: { allow: ['..'] } }
})
