import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 300_000,
    // Two files at a time even on two cores: `npm test` reaches this package last, alone, and the
    // Redis queue test (most of its time, its workers waiting on each other) would leave a core
    // idle beside it.
    maxWorkers: 2,
    minWorkers: 1,
  },
});
