import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 180_000,
    // The memory test collects garbage before it measures.
    poolOptions: { forks: { execArgv: ['--expose-gc'] } },
  },
});
