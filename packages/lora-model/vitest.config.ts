import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests here start Node or Python processes or train tiny models: vitest's 5 s default
    // fails them on a loaded two-core machine. Their waits end at the events they wait for;
    // these limits only stop a hang.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
