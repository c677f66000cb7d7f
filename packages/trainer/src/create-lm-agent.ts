import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OptionError } from '@poad/config';
import {
  ADAPTER_FILES,
  type ChatTemplate,
  type DownloadProgress,
  type ModelSnapshot,
  readChatTemplate,
  readPeftAdapter,
  readSafetensorsFile,
  type TextTokenizer,
} from '@poad/hf-files';
import {
  type CausalLM,
  llamaConfigOf,
  loadAdapter,
  loadCausalLM,
  loadValueHead,
  readAdapter,
  saveAdapter,
  saveValueHead,
  tokenStats,
  VALUE_HEAD_FILE,
  type WeightDtype,
} from '@poad/lora-model';
import { type BackendChoice, initBackend, withGpuPhase } from '@poad/tfjs-kernels';
import type * as tf from '@tensorflow/tfjs-core';
import type { Agent } from './agent.js';
import { algorithmEntry } from './algorithms/registry.js';
import type { AlgorithmConfigBase } from './algorithms/types.js';
import { LmPolicy } from './lm-agent.js';
import { chooseProducts } from './products.js';
import { type PromptFormatOption, promptClock, promptDateOf } from './prompt-format.js';
import type { MatMulOption } from './run-options.js';

/** Options of {@link createLmAgent}. */
export interface LmAgentOptions {
  /**
   * A Hugging Face model folder with config.json, model.safetensors and tokenizer.json, or a model
   * on the Hugging Face Hub, `ORG/NAME` or `ORG/NAME@REVISION`, downloaded first into the Hub
   * cache (`loadCausalLM` of `@poad/lora-model`; an existing folder wins over a Hub id).
   */
  model: string;
  backend: BackendChoice;
  /** Threads of the native kernels on wasm (unset: the addon's current setting). */
  threads?: number;
  /** Storage of the frozen weights (`@poad/lora-model`'s `WeightDtype`; default `auto`). */
  weightDtype?: WeightDtype;
  /**
   * How products with frozen float32 weights run on webgpu (default `auto`: per shape, as measured
   * on the GPU; see {@link chooseProducts}). The choice is in the agent's `info.products`.
   */
  matmul?: MatMulOption;
  /** The product plan a resumed run recorded (environment.json `model.products`). */
  recordedProducts?: unknown;
  /** Folder of product plans measured on this machine (default `productCacheDir()`); false: none. */
  productCacheDir?: string | false;
  /** Lines worth showing (a product measurement and how long it took). */
  log?: (line: string) => void;
  seed: number;
  lora: { r: number; alpha: number };
  /**
   * Token ids that end a generated action (open action spaces); default: the tokenizer's EOS,
   * and in the chat format also the `eos_token_id`s of the model's generation_config.json.
   */
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
  /**
   * How observations become prompts (`LmPolicy`'s `PromptFormat`): `plain` (default), `chat`
   * (the model's chat template; a model without one is refused), or `auto` (chat when the model
   * has a chat template). The agent's `prompt` says which was used.
   */
  promptFormat?: PromptFormatOption;
  /** The date the chat template's `strftime_now` sees, `YYYY-MM-DD` (default: today). */
  promptDate?: string;
  /** Download progress (bytes, rate, ETA) while a Hub model is fetched. */
  onProgress?: (progress: DownloadProgress) => void;
}

/** The `eos_token_id`s of a model folder's generation_config.json (none when it has none). */
async function generationStopIds(folder: string): Promise<number[]> {
  try {
    const json = JSON.parse(await readFile(join(folder, 'generation_config.json'), 'utf8')) as {
      eos_token_id?: unknown;
    };
    const ids = Array.isArray(json.eos_token_id) ? json.eos_token_id : [json.eos_token_id];
    return ids.filter((id): id is number => Number.isInteger(id) && id >= 0);
  } catch {
    return [];
  }
}

/** The prompt format an agent uses: `plain`, or `chat` with the model's template and a date. */
type ChosenPrompt =
  | { format: 'plain' }
  | { format: 'chat'; template: ChatTemplate; date: string; stopTokenIds: number[] };

async function choosePrompt(
  o: LmAgentOptions,
  folder: string,
  tokenizer: TextTokenizer,
): Promise<ChosenPrompt> {
  const asked = o.promptFormat ?? 'plain';
  if (asked === 'plain') return { format: 'plain' };
  const template = await readChatTemplate(folder);
  if (template === undefined) {
    if (asked === 'auto') return { format: 'plain' };
    throw new OptionError(
      `promptFormat (--prompt-format) chat: the model ${o.model} has no chat template (no "chat_template" in tokenizer_config.json, no chat_template.jinja); use plain or auto`,
    );
  }
  const date = o.promptDate ?? promptDateOf();
  promptClock(date);
  const ids = [
    ...(tokenizer.eosId === undefined ? [] : [tokenizer.eosId]),
    ...(await generationStopIds(folder)),
  ].filter((id) => id < tokenizer.vocabSize);
  return { format: 'chat', template, date, stopTokenIds: [...new Set(ids)] };
}

/**
 * Loads a model (a folder or a Hub id) and wraps it as an {@link Agent} with a fresh LoRA adapter
 * and value head, its policy prompting as `promptFormat` says.
 */
export async function createLmAgent(o: LmAgentOptions): Promise<Agent> {
  const entry = algorithmEntry(o.algorithm ?? 'poad');
  const config = o.config ?? entry.resolveConfig({ seed: o.seed }, {});
  if (o.promptDate !== undefined) promptClock(o.promptDate);
  const backend = await initBackend(o.backend, o.threads ? { threads: o.threads } : {});
  const model = await loadCausalLM(o.model, {
    seed: o.seed,
    ...(o.weightDtype ? { weightDtype: o.weightDtype } : {}),
    lora: { r: o.lora.r, alpha: o.lora.alpha },
    valueHead: entry.valueHead ? (o.valueHead ? { hiddenSizes: o.valueHead } : true) : false,
    ...(o.onProgress ? { onProgress: o.onProgress } : {}),
  });
  try {
    const products =
      backend.backend === 'webgpu'
        ? await chooseProducts(model, {
            matmul: o.matmul ?? 'auto',
            adapter: {
              description: backend.description,
              software: backend.adapter?.software === true,
            },
            ...(o.recordedProducts === undefined ? {} : { recorded: o.recordedProducts }),
            ...(o.productCacheDir === undefined ? {} : { cacheDir: o.productCacheDir }),
            ...(o.log ? { log: o.log } : {}),
          })
        : undefined;
    return await agentOf(o, entry, config, backend, model, products);
  } catch (e) {
    model.dispose();
    throw e;
  }
}

async function agentOf(
  o: LmAgentOptions,
  entry: ReturnType<typeof algorithmEntry>,
  config: AlgorithmConfigBase,
  backend: Awaited<ReturnType<typeof initBackend>>,
  model: CausalLM,
  products: Awaited<ReturnType<typeof chooseProducts>> | undefined,
): Promise<Agent> {
  const tokenizer = model.tokenizer;
  if (!tokenizer) {
    throw new Error(
      `${o.model}: no tokenizer.json; the training apps need the model's tokenizer to score action labels`,
    );
  }
  const folder = model.source?.folder ?? o.model;
  const snapshot: ModelSnapshot | undefined = model.source?.snapshot;
  const prompt = await choosePrompt(o, folder, tokenizer);
  const stopTokenIds =
    o.stopTokenIds ?? (prompt.format === 'chat' ? prompt.stopTokenIds : undefined);
  const built = entry.createPolicy(model, tokenizer, config, {
    ...(stopTokenIds ? { stopTokenIds } : {}),
  });
  const { policy } = built;
  if (prompt.format === 'chat') {
    // The registry's createPolicy takes no prompt format: it is set on the built policy.
    if (!(policy instanceof LmPolicy)) {
      policy.dispose?.();
      throw new OptionError(
        `promptFormat (--prompt-format) chat: the policy of --algo ${entry.name} is not an LmPolicy and cannot take a chat template; use plain`,
      );
    }
    policy.setPromptFormat({
      kind: 'chat',
      template: prompt.template,
      now: promptClock(prompt.date),
    });
  }
  // Adapters saved in subfolders beside the actor's (e.g. ETPO's critic and target critic).
  const extraAdapters = Object.entries(built.adapters);
  return {
    policy,
    backend: `${backend.description} (${backend.source})`,
    ...(backend.adapter ? { gpu: backend.adapter } : {}),
    prompt: prompt.format === 'chat' ? { format: 'chat', date: prompt.date } : { format: 'plain' },
    info: {
      model: o.model,
      ...(folder === o.model ? {} : { folder }),
      ...(snapshot
        ? {
            hub: {
              repo: snapshot.repo,
              revision: snapshot.revision,
              commit: snapshot.commit,
              endpoint: snapshot.endpoint,
              source: snapshot.source,
              ...(snapshot.warning ? { warning: snapshot.warning } : {}),
            },
          }
        : {}),
      promptFormat: prompt.format,
      ...(prompt.format === 'chat' ? { promptDate: prompt.date } : {}),
      ...(products ? { products: products.choice, productsFrom: products.source } : {}),
      config: model.config,
      trainableActor: count(policy.actorVariables),
      trainableCritic: count(policy.criticVariables),
    },
    beginIteration() {
      policy.clearFeatureCache();
    },
    async saveTrainable(dir) {
      mkdirSync(dir, { recursive: true });
      // Counted as checkpoint work on webgpu (gpuCounters).
      await withGpuPhase('checkpoint', async () => {
        await saveAdapter(model, dir);
        for (const [sub, adapter] of extraAdapters)
          await saveAdapter(model, join(dir, sub), { adapter });
        if (entry.valueHead) await saveValueHead(model, dir);
      });
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
