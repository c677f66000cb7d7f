// Acting with an agent's policy to measure it: success rates and returns over whole episodes,
// and the probabilities it gives each label.
import { type EpisodeStats, makeVecEnv, type TextStep } from '@poad/envs-core';
import { type RolloutConfig, SeededRng, selectActions } from '@poad/ppo';
import type { Agent } from './agent/agent.js';
import type { AppSpec } from './app.js';
import type { RunConfig } from './run-config.js';

/** The sampler settings of a run's config: what evaluation and `play` act with. */
export type SamplerConfig = Pick<
  RolloutConfig,
  'candidateNormalisation' | 'tokenSpace' | 'maxNewTokens' | 'temperature' | 'topK'
> &
  Partial<Pick<RolloutConfig, 'stopCheckEvery'>>;

/**
 * How evaluation and `play` choose actions: the sampler settings of the run's resolved config
 * (token space, candidate normalisation, generation limits), greedy or sampled — the same fields
 * training passes to `selectActions`.
 */
export function samplerOptions(
  config: SamplerConfig,
  greedy: boolean,
  rng: SeededRng,
): Parameters<typeof selectActions>[2] {
  return {
    candidateNormalisation: config.candidateNormalisation,
    tokenSpace: config.tokenSpace,
    maxNewTokens: config.maxNewTokens,
    temperature: config.temperature,
    topK: config.topK,
    ...(config.stopCheckEvery === undefined ? {} : { stopCheckEvery: config.stopCheckEvery }),
    greedy,
    rng,
  };
}

/**
 * The probability the policy gives each label of each step, exactly as the run's sampler would
 * sample it (its token space and candidate normalisation; temperature 1): one array per step, in
 * the order of its `actions`. Nothing is sampled, so no generator advances. For restricted
 * action spaces only: a step with `actions: null` is refused.
 */
export async function actionProbabilities(
  agent: Pick<Agent, 'policy'>,
  steps: readonly TextStep[],
  config: SamplerConfig,
): Promise<Float64Array[]> {
  const open = steps.findIndex((s) => s.actions === null);
  if (open >= 0)
    throw new TypeError(
      `actionProbabilities(steps[${open}]): an open action space (actions: null) has no label probabilities; pass steps that list their valid labels.`,
    );
  if (steps.length === 0) return [];
  const { actionProbs } = await selectActions(
    agent.policy,
    steps,
    samplerOptions(config, true, new SeededRng(0)),
  );
  return actionProbs.map((p) => p!);
}

export interface EvalResult {
  task: string;
  greedy: boolean;
  episodes: number;
  successRate: number;
  meanReturn: number;
  stdReturn: number;
  meanLength: number;
}

/**
 * Success rate and discounted return of the current policy over `episodes` episodes, acting
 * with the TWOSOME sampler (greedy: arg-max over the valid labels; otherwise sampled). Each of
 * the parallel envs plays a fixed share of the episodes, so short episodes are not favoured.
 */
export async function evaluateTask(
  spec: AppSpec,
  agent: Agent,
  task: string,
  o: {
    episodes: number;
    greedy: boolean;
    seed: number;
    envs: number;
    config: SamplerConfig;
    options?: Record<string, unknown>;
  },
): Promise<EvalResult> {
  const n = Math.max(1, Math.min(o.envs, o.episodes));
  const quota = Array.from(
    { length: n },
    (_, i) => Math.floor(o.episodes / n) + (i < o.episodes % n ? 1 : 0),
  );
  let index = 0;
  const env = makeVecEnv(() => spec.makeEnv(task, o.options, index++), n, { seed: o.seed });
  const rng = new SeededRng(o.seed);
  const finished: EpisodeStats[] = [];
  const counts = new Array<number>(n).fill(0);
  let steps: TextStep[] = await env.reset();
  try {
    while (counts.some((c, i) => c < quota[i]!)) {
      const { labels } = await selectActions(
        agent.policy,
        steps,
        samplerOptions(o.config, o.greedy, rng),
      );
      steps = await env.step(labels);
      steps.forEach((s, i) => {
        const ep = s.info.episode as EpisodeStats | undefined;
        if (ep && counts[i]! < quota[i]!) {
          counts[i]! += 1;
          finished.push(ep);
        }
      });
    }
  } finally {
    await env.close();
  }
  const rets = finished.map((e) => e.discountedReturn);
  const mean = rets.reduce((a, b) => a + b, 0) / rets.length;
  const std = Math.sqrt(rets.reduce((a, b) => a + (b - mean) ** 2, 0) / rets.length);
  return {
    task,
    greedy: o.greedy,
    episodes: finished.length,
    successRate: finished.filter((e) => e.success === true).length / finished.length,
    meanReturn: mean,
    stdReturn: std,
    meanLength: finished.reduce((a, e) => a + e.length, 0) / finished.length,
  };
}

/**
 * Greedy and sampled evaluation of every task `spec.evalTasks(task)` lists (the trained task
 * and its unseen variants), logging one line each; keys are `<task>/greedy|sampled`. When `stop`
 * returns true it ends after the evaluation set under way, with the sets done so far.
 */
export async function evaluateAll(
  spec: AppSpec,
  agent: Agent,
  rc: Pick<RunConfig, 'run' | 'config' | 'envOptions'>,
  log: (line: string) => void,
  stop: () => boolean = () => false,
): Promise<Record<string, EvalResult>> {
  const o = {
    task: rc.run.task,
    evalEpisodes: rc.run.evalEpisodes,
    seed: rc.config.seed,
    envs: rc.run.envs,
    config: rc.config as SamplerConfig,
    options: rc.envOptions as Record<string, unknown>,
  };
  const results: Record<string, EvalResult> = {};
  for (const task of o.evalEpisodes > 0 ? spec.evalTasks(o.task) : []) {
    for (const greedy of [true, false]) {
      if (stop()) return results;
      const r = await evaluateTask(spec, agent, task, {
        episodes: o.evalEpisodes,
        greedy,
        seed: o.seed + 2_000_003,
        envs: o.envs,
        config: o.config,
        options: o.options,
      });
      results[`${task}/${greedy ? 'greedy' : 'sampled'}`] = r;
      log(
        `eval ${task} (${greedy ? 'greedy' : 'sampled'}): success ${(100 * r.successRate).toFixed(1)}%, return ${r.meanReturn.toFixed(3)} ± ${r.stdReturn.toFixed(3)} over ${r.episodes} episodes`,
      );
    }
  }
  return results;
}
