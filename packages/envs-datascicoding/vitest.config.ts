import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The tests mostly wait on sandboxed Python processes, so two files at a time overlap well
    // even on two cores.
    maxWorkers: 2,
    minWorkers: 1,
  },
});
