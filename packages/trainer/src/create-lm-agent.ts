import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ADAPTER_FILES, readPeftAdapter, readSafetensorsFile } from '@poad/hf-files';
import {
  type BackendChoice,
  initBackend,
  llamaConfigOf,
  loadAdapter,
  loadCausalLM,
  loadValueHead,
  readAdapter,
  saveAdapter,
  saveValueHead,
  tokenStats,
  VALUE_HEAD_FILE,
} from '@poad/lora-model';
import type * as tf from '@tensorflow/tfjs-core';
import type { Agent } from './agent.js';
import { EtpoLmPolicy } from './etpo-policy.js';
import { LmPolicy } from './lm-agent.js';

/** Options of {@link createLmAgent}. */
export interface LmAgentOptions {
  /** Hugging Face model folder with config.json, model.safetensors and tokenizer.json. */
  model: string;
  backend: BackendChoice;
  /** Threads of the native kernels on wasm (unset: the addon's current setting). */
  threads?: number;
  seed: number;
  lora: { r: number; alpha: number };
  /** Token ids that end a generated action (open action spaces); default: the tokenizer's EOS. */
  stopTokenIds?: number[];
  /** Value-head hidden sizes (default 1024, 512 as the paper). */
  valueHead?: number[];
  /**
   * ETPO instead of a value head: the critic is a second LoRA adapter whose language-model head
   * gives Q over the vocabulary, with a Polyak-averaged target copy (`EtpoLmPolicy`). Saved as
   * PEFT adapters in `critic/` and `target/` next to the actor's.
   */
  etpo?: { beta: number; reference: 'base' | 'uniform' };
}

/** Subfolders of a saved ETPO agent that hold its critic and target-critic adapters. */
export const ETPO_ADAPTER_DIRS = { critic: 'critic', target: 'target' } as const;

/** Loads a model folder and wraps it as an {@link Agent} with a fresh LoRA adapter and value head. */
export async function createLmAgent(o: LmAgentOptions): Promise<Agent> {
  const backend = await initBackend(o.backend, o.threads ? { threads: o.threads } : {});
  const model = await loadCausalLM(o.model, {
    seed: o.seed,
    lora: { r: o.lora.r, alpha: o.lora.alpha },
    valueHead: o.etpo ? false : o.valueHead ? { hiddenSizes: o.valueHead } : true,
  });
  const tokenizer = model.tokenizer;
  if (!tokenizer) {
    throw new Error(
      `${o.model}: no tokenizer.json; the training apps need the model's tokenizer to score action labels`,
    );
  }
  const etpo = o.etpo
    ? new EtpoLmPolicy(model, tokenizer, { ...o.etpo, seed: o.seed, stopTokenIds: o.stopTokenIds })
    : null;
  const policy = etpo ?? new LmPolicy(model, tokenizer, o.stopTokenIds);
  // ETPO's critic and target: extra PEFT adapters in subfolders; PPO's critic: the value head.
  const extraAdapters = etpo
    ? ([
        [ETPO_ADAPTER_DIRS.critic, etpo.critic],
        [ETPO_ADAPTER_DIRS.target, etpo.target],
      ] as const)
    : [];
  return {
    policy,
    backend: `${backend.description} (${backend.source})`,
    ...(backend.adapter ? { gpu: backend.adapter } : {}),
    info: {
      model: o.model,
      config: model.config,
      trainableActor: count(policy.actorVariables),
      trainableCritic: count(policy.criticVariables),
    },
    beginIteration() {
      policy.clearFeatureCache();
    },
    async saveTrainable(dir) {
      mkdirSync(dir, { recursive: true });
      await saveAdapter(model, dir);
      if (etpo) {
        for (const [sub, adapter] of extraAdapters)
          await saveAdapter(model, join(dir, sub), { adapter });
      } else await saveValueHead(model, dir);
    },
    async loadTrainable(dir) {
      await loadAdapter(model, dir);
      if (!etpo) {
        await loadValueHead(model, dir);
        return;
      }
      for (const [sub, adapter] of extraAdapters) {
        const read = await readAdapter(model, join(dir, sub));
        try {
          const from = read.variables();
          const to = adapter.variables();
          if (
            from.length !== to.length ||
            from.some((v, i) => v.shape.join() !== to[i]!.shape.join())
          )
            throw new Error(
              `${join(dir, sub)}: the adapter does not match this run's critic (rank or target modules differ)`,
            );
          to.forEach((v, i) => {
            v.assign(from[i]!);
          });
        } finally {
          read.dispose();
        }
      }
    },
    async checkTrainable(dir) {
      const baseConfig = llamaConfigOf(model);
      const adapter = await readPeftAdapter(dir, { baseConfig });
      const files: [string, Map<string, { data: Float32Array }>][] = [
        [join(dir, ADAPTER_FILES.weights), adapter.tensors],
      ];
      if (etpo) {
        for (const [sub] of extraAdapters) {
          const extra = await readPeftAdapter(join(dir, sub), { baseConfig });
          files.push([join(dir, sub, ADAPTER_FILES.weights), extra.tensors]);
        }
      } else {
        const head = await readSafetensorsFile(join(dir, VALUE_HEAD_FILE));
        files.push([join(dir, VALUE_HEAD_FILE), head.tensors]);
      }
      for (const [file, tensors] of files) {
        for (const [name, t] of tensors) {
          if (!t.data.every(Number.isFinite)) {
            throw new Error(`${file}: tensor ${name} holds a NaN or an infinity`);
          }
        }
      }
    },
    async tokenText(id) {
      return id < tokenizer.vocabSize
        ? tokenizer.decode([id], { skipSpecialTokens: false })
        : `<${id}>`;
    },
    async perplexity(lines) {
      let nll = 0;
      let n = 0;
      for (let i = 0; i < lines.length; i += 16) {
        const chunk = lines.slice(i, i + 16);
        const ids = await Promise.all(
          chunk.map((l) => tokenizer.encode(l, { addSpecialTokens: false })),
        );
        const bos = tokenizer.bosId ?? 1;
        const s = tokenStats(
          model,
          ids.map(() => [bos]),
          ids,
        );
        const lp = (await s.logProbs.data()) as Float32Array;
        s.logProbs.dispose();
        s.entropies.dispose();
        for (const v of lp) nll -= v;
        n += lp.length;
      }
      return Math.exp(nll / Math.max(1, n));
    },
    dispose() {
      etpo?.dispose();
      model.dispose();
    },
  };
}

const count = (vars: readonly tf.Variable[]) => vars.reduce((a, v) => a + v.size, 0);
