import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ADAPTER_FILES, readPeftAdapter, readSafetensorsFile } from '@poad/hf-files';
import {
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
import { type BackendChoice, initBackend } from '@poad/tfjs-kernels';
import type * as tf from '@tensorflow/tfjs-core';
import type { Agent } from './agent.js';
import { algorithmEntry } from './algorithms/registry.js';
import type { AlgorithmConfigBase } from './algorithms/types.js';

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
  /** Value-head hidden sizes (default 1024, 512 as the paper), for algorithms with one. */
  valueHead?: number[];
  /**
   * The registered algorithm whose policy to build (default `poad`): PPO's has a value head,
   * ETPO's a critic and a target-critic adapter saved in subfolders beside the actor's.
   */
  algorithm?: string;
  /** Its resolved config (default: its schema's defaults with `seed`). */
  config?: AlgorithmConfigBase;
}

/** Loads a model folder and wraps it as an {@link Agent} with a fresh LoRA adapter and value head. */
export async function createLmAgent(o: LmAgentOptions): Promise<Agent> {
  const entry = algorithmEntry(o.algorithm ?? 'poad');
  const config = o.config ?? entry.resolveConfig({ seed: o.seed }, {});
  const backend = await initBackend(o.backend, o.threads ? { threads: o.threads } : {});
  const model = await loadCausalLM(o.model, {
    seed: o.seed,
    lora: { r: o.lora.r, alpha: o.lora.alpha },
    valueHead: entry.valueHead ? (o.valueHead ? { hiddenSizes: o.valueHead } : true) : false,
  });
  const tokenizer = model.tokenizer;
  if (!tokenizer) {
    throw new Error(
      `${o.model}: no tokenizer.json; the training apps need the model's tokenizer to score action labels`,
    );
  }
  const built = entry.createPolicy(model, tokenizer, config, {
    ...(o.stopTokenIds ? { stopTokenIds: o.stopTokenIds } : {}),
  });
  const { policy } = built;
  // Adapters saved in subfolders beside the actor's (e.g. ETPO's critic and target critic).
  const extraAdapters = Object.entries(built.adapters);
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
      for (const [sub, adapter] of extraAdapters)
        await saveAdapter(model, join(dir, sub), { adapter });
      if (entry.valueHead) await saveValueHead(model, dir);
    },
    async loadTrainable(dir) {
      await loadAdapter(model, dir);
      if (entry.valueHead) await loadValueHead(model, dir);
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
              `${join(dir, sub)}: the adapter does not match this run's ${sub} adapter (rank or target modules differ)`,
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
      for (const [sub] of extraAdapters) {
        const extra = await readPeftAdapter(join(dir, sub), { baseConfig });
        files.push([join(dir, sub, ADAPTER_FILES.weights), extra.tensors]);
      }
      if (entry.valueHead) {
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
      policy.dispose?.();
      model.dispose();
    },
  };
}

const count = (vars: readonly tf.Variable[]) => vars.reduce((a, v) => a + v.size, 0);
