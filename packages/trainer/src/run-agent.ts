import type { BackendChoice } from '@poad/tfjs-kernels';
import type { Agent } from './agent.js';
import { createLmAgent } from './create-lm-agent.js';
import { embeddedStopTokenIds, resolveModelPath } from './model-path.js';
import type { RunConfig } from './run-config.js';

/** The language-model agent a resolved run asks for: model, backend, threads, LoRA, its algorithm's policy. */
export function createRunAgent(rc: RunConfig): Promise<Agent> {
  const { run, config } = rc;
  const stopTokenIds = embeddedStopTokenIds(run.model);
  return createLmAgent({
    model: resolveModelPath(run.model),
    backend: run.backend as BackendChoice,
    threads: run.threads,
    seed: config.seed,
    lora: { r: run.loraRank, alpha: run.loraAlpha },
    algorithm: rc.algorithm.name,
    config,
    ...(stopTokenIds ? { stopTokenIds } : {}),
  });
}
