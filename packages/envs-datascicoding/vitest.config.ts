import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A folder where the first file to load a built-in dataset leaves it for the others.
    globalSetup: ['test/global-setup.ts'],
    // Tests here start Node or Python processes or train tiny models: vitest's 5 s default
    // fails them on a loaded two-core machine. Their waits end at the events they wait for;
    // these limits only stop a hang.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // The tests mostly wait on sandboxed Python processes, so two files at a time overlap well
    // even on two cores.
    maxWorkers: 2,
    minWorkers: 1,
  },
});
