import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: { include: ['bench/**/*.run.ts'], testTimeout: 900_000 },
});
