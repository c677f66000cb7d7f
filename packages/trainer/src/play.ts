// One episode played and printed step by step, to look at what a policy does.
import { type EpisodeStats, makeVecEnv, type TextStep } from '@poad/envs-core';
import { SeededRng, selectActions } from '@poad/ppo';
import type { Agent } from './agent/agent.js';
import type { AppSpec } from './app.js';
import { type SamplerConfig, samplerOptions } from './evaluate.js';

/** What one played episode looked like (also printed step by step). */
export interface PlayedEpisode {
  greedy: boolean;
  steps: { observation: string; actions: { label: string; prob: number }[]; chosen: string }[];
  episode?: EpisodeStats;
}

/**
 * Play one episode of `task` with the current policy, greedy (arg-max of the TWOSOME sampler)
 * or sampled, and print every step: the observation, each valid action's probability and the
 * choice. For looking at what a checkpoint does, e.g. why a greedy policy loops. Stops at the
 * end of the episode or after `maxSteps` actions.
 */
export async function playEpisode(
  spec: Pick<AppSpec, 'makeEnv'>,
  agent: Pick<Agent, 'policy'>,
  task: string,
  o: {
    greedy: boolean;
    seed: number;
    config: SamplerConfig;
    options?: Record<string, unknown>;
    maxSteps?: number;
  },
  log: (line: string) => void,
): Promise<PlayedEpisode> {
  const env = makeVecEnv(() => spec.makeEnv(task, o.options, 0), 1, { seed: o.seed });
  const rng = new SeededRng(o.seed);
  const played: PlayedEpisode = { greedy: o.greedy, steps: [] };
  log(`--- ${task}: one ${o.greedy ? 'greedy' : 'sampled'} episode (seed ${o.seed}) ---`);
  let steps: TextStep[] = await env.reset();
  try {
    for (let t = 1; t <= (o.maxSteps ?? 1000); t++) {
      const step = steps[0]!;
      const sel = await selectActions(agent.policy, steps, samplerOptions(o.config, o.greedy, rng));
      const chosen = sel.labels[0]!;
      const probs = sel.actionProbs[0];
      const actions = (step.actions ?? []).map((label, i) => ({ label, prob: probs?.[i] ?? 0 }));
      played.steps.push({ observation: step.observation, actions, chosen });
      log(`\nstep ${t}: ${step.observation.trim().replace(/\s*\n\s*/g, ' ')}`);
      for (const a of [...actions].sort((x, y) => y.prob - x.prob)) {
        log(`  ${a.prob.toFixed(3)}  ${a.label}${a.label === chosen ? '   <- chosen' : ''}`);
      }
      if (actions.length === 0) log(`  generated: ${JSON.stringify(chosen)}`);
      steps = await env.step(sel.labels);
      const ep = steps[0]!.info.episode as EpisodeStats | undefined;
      if (ep) {
        played.episode = ep;
        log(
          `\nepisode over after ${ep.length} steps: ${ep.success ? 'success' : 'no success'}, discounted return ${ep.discountedReturn.toFixed(3)}`,
        );
        break;
      }
    }
  } finally {
    await env.close();
  }
  return played;
}
