import type { TextStep } from './types.js';

/** Stable text of a step: sorted keys, non-JSON values spelled out, ignored info keys dropped. */
export function canonical(step: TextStep, ignore: Set<string>): string {
  const info: Record<string, unknown> = {};
  for (const key of Object.keys(step.info ?? {}).sort()) {
    if (!ignore.has(key)) info[key] = step.info[key];
  }
  return JSON.stringify(
    {
      observation: step.observation,
      actions: step.actions,
      reward: step.reward,
      terminated: step.terminated,
      truncated: step.truncated,
      info,
    },
    (_key, value: unknown) => {
      if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
      if (typeof value === 'bigint') return `${value}n`;
      if (typeof value === 'function') return '[function]';
      if (value && typeof value === 'object' && !Array.isArray(value)) {
        const sorted: Record<string, unknown> = {};
        for (const k of Object.keys(value).sort())
          sorted[k] = (value as Record<string, unknown>)[k];
        return sorted;
      }
      return value;
    },
  );
}
