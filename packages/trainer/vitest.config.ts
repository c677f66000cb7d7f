import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 300_000,
    // The workspace packages' built dist/ (what the tests import as @poad/*) loads as Node loads
    // it for a user, not transformed again in every test file: the tests import their own
    // sources only.
    server: { deps: { external: [/\/packages\/[^/]+\/dist\//] } },
  },
});
