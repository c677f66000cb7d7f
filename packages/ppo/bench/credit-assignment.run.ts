import { it } from 'vitest';
import { useCpu } from '../test/backend.js';
import { formatExperiment, runExperiment } from '../test/credit-assignment.js';

// Prints the README's synthetic credit-assignment tables (POAD, NTPO, TWOSOME; 5 seeds) and
// the time it took.
it('synthetic credit assignment', { timeout: 900_000 }, async () => {
  await useCpu();
  const t0 = performance.now();
  const e = await runExperiment(['poad', 'ntpo']);
  console.log(formatExperiment(e));
  console.log(`seconds: ${((performance.now() - t0) / 1000).toFixed(1)}`);
});
