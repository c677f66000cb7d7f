/**
 * The model facts an agent records in a run's environment.json (`Agent.info`): what was loaded
 * (the model option, its folder, for a Hub model the repository, revision and commit), how it
 * prompts, how its products run, its config and how many parameters each side trains.
 */
import type { ModelSnapshot } from '@poad/hf-files';
import type { CausalLM } from '@poad/lora-model';
import type { TokenPolicy } from '@poad/ppo';
import type * as tf from '@tensorflow/tfjs-core';
import type { ChosenPrompt } from './choose-prompt.js';
import type { chooseProducts } from './products.js';

/** What {@link modelInfo} describes. */
export interface ModelFacts {
  /** The model option as given (a folder or a Hub id). */
  readonly model: string;
  /** The folder it was loaded from (recorded when it differs from `model`). */
  readonly folder: string;
  readonly snapshot: ModelSnapshot | undefined;
  readonly prompt: ChosenPrompt;
  readonly products: Awaited<ReturnType<typeof chooseProducts>> | undefined;
  readonly config: CausalLM['config'];
  readonly policy: Pick<TokenPolicy, 'actorVariables' | 'criticVariables'>;
}

const count = (vars: readonly tf.Variable[]) => vars.reduce((a, v) => a + v.size, 0);

/** The `model` record of environment.json, its keys in the order they are written. */
export function modelInfo(f: ModelFacts): Record<string, unknown> {
  const { prompt, snapshot, products } = f;
  return {
    model: f.model,
    ...(f.folder === f.model ? {} : { folder: f.folder }),
    ...(snapshot ? { hub: hubRecord(snapshot) } : {}),
    promptFormat: prompt.format,
    ...(prompt.format === 'chat' ? { promptDate: prompt.date } : {}),
    ...(products ? { products: products.choice, productsFrom: products.source } : {}),
    config: f.config,
    trainableActor: count(f.policy.actorVariables),
    trainableCritic: count(f.policy.criticVariables),
  };
}

/** A Hub snapshot as recorded: enough to load the same commit again (`createRunAgent`). */
function hubRecord(s: ModelSnapshot): Record<string, unknown> {
  return {
    repo: s.repo,
    revision: s.revision,
    commit: s.commit,
    endpoint: s.endpoint,
    source: s.source,
    ...(s.warning ? { warning: s.warning } : {}),
  };
}
