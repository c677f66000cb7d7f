import type { BackendChoice } from '@poad/lora-model';
import type { Agent } from './agent.js';
import type { AppSpec } from './app.js';
import { createLmAgent } from './create-lm-agent.js';
import { resolveModelPath } from './model-path.js';
import { etpoSettingsOf, type TrainingOptions } from './resolve.js';

/** The language-model agent a run's resolved options ask for (model, backend, threads, LoRA). */
export function createRunAgent(spec: AppSpec, o: TrainingOptions): Promise<Agent> {
  return createLmAgent({
    model: resolveModelPath(o.model),
    backend: o.backend as BackendChoice,
    threads: o.threads,
    seed: o.seed,
    lora: { r: o.loraRank, alpha: o.loraAlpha },
    ...(o.algo === 'etpo' ? { etpo: etpoSettingsOf(o) } : {}),
    // A generated program ends at id 2 (`</s>` of the default model's tokenizer).
    ...(spec.family === 'datascicoding' ? { stopTokenIds: [2] } : {}),
  });
}
