import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createOvercookedEnv, OVERCOOKED_TASKS } from '../src/index.js';

describe('labels along arbitrary macro sequences', () => {
  for (const task of ['tomato-salad', 'tomato-lettuce-salad'] as const) {
    const n = OVERCOOKED_TASKS[task].macros.length;
    it(`${task}: one distinct comma-free label per macro, and a label runs its macro`, () => {
      fc.assert(
        fc.property(fc.array(fc.integer({ min: 0, max: n - 1 }), { maxLength: 60 }), (seq) => {
          const byLabel = createOvercookedEnv(task);
          const byIndex = createOvercookedEnv(task);
          let a = byLabel.resetSync();
          let b = byIndex.resetSync();
          for (const i of seq) {
            const labels = a.actions as readonly string[];
            expect(labels).toHaveLength(n);
            expect(new Set(labels).size).toBe(n);
            for (const l of labels) expect(l).not.toContain(',');
            a = byLabel.stepSync(labels[i] as string);
            b = byIndex.stepIndex(i);
            expect(a).toEqual(b);
            expect(a.info.primitiveSteps).toBeGreaterThanOrEqual(1);
            if (a.terminated || a.truncated) break;
          }
        }),
        { numRuns: 200 },
      );
    });
  }
});
