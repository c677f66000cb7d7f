import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests start Redis servers and worker processes: a loaded machine needs more than 5 s.
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
