/**
 * Building the language-model agent: the model loaded (a folder or a Hub id) on a TF.js backend,
 * its products planned, the algorithm's policy built on it with the chosen prompt format, and the
 * {@link Agent} around them.
 */
import type { DownloadProgress } from '@poad/hf-files';
import { type CausalLM, loadCausalLM, type WeightDtype } from '@poad/lora-model';
import { type BackendChoice, initBackend } from '@poad/tfjs-kernels';
import { algorithmConfig, algorithmEntry } from '../algorithms/registry.js';
import type { AlgorithmConfigBase } from '../algorithms/types.js';
import { type PromptFormatOption, promptClock } from '../prompt-format.js';
import type { MatMulOption } from '../run-options.js';
import type { Agent } from './agent.js';
import { choosePrompt, promptRecord, usePrompt } from './choose-prompt.js';
import { modelInfo } from './model-info.js';
import { perplexity } from './perplexity.js';
import { chooseProducts } from './products.js';
import {
  checkTrainable,
  loadTrainable,
  saveTrainable,
  type TrainableParts,
} from './trainable-files.js';

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

/**
 * Loads a model (a folder or a Hub id) and wraps it as an {@link Agent} with a fresh LoRA adapter
 * and value head, its policy prompting as `promptFormat` says.
 */
export async function createLmAgent(o: LmAgentOptions): Promise<Agent> {
  const entry = algorithmEntry(o.algorithm ?? 'poad');
  const config = o.config ?? algorithmConfig(entry, { seed: o.seed });
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

/**
 * The agent over a loaded model: the prompt format settled, the algorithm's policy built with it,
 * and the agent's files and text utilities bound to the model (each in its own module).
 */
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
  const prompt = await choosePrompt(o, folder, tokenizer);
  const stopTokenIds =
    o.stopTokenIds ?? (prompt.format === 'chat' ? prompt.stopTokenIds : undefined);
  const built = entry.createPolicy(model, tokenizer, config, {
    ...(stopTokenIds ? { stopTokenIds } : {}),
  });
  const { policy } = built;
  usePrompt(policy, prompt, entry.name);
  const parts: TrainableParts = {
    valueHead: entry.valueHead,
    adapters: Object.entries(built.adapters),
  };
  return {
    policy,
    backend: `${backend.description} (${backend.source})`,
    ...(backend.adapter ? { gpu: backend.adapter } : {}),
    prompt: promptRecord(prompt),
    info: modelInfo({
      model: o.model,
      folder,
      snapshot: model.source?.snapshot,
      prompt,
      products,
      config: model.config,
      policy,
    }),
    beginIteration() {
      policy.clearFeatureCache();
    },
    saveTrainable: (dir) => saveTrainable(model, parts, dir),
    loadTrainable: (dir) => loadTrainable(model, parts, dir),
    checkTrainable: (dir) => checkTrainable(model, parts, dir),
    async tokenText(id) {
      return id < tokenizer.vocabSize
        ? tokenizer.decode([id], { skipSpecialTokens: false })
        : `<${id}>`;
    },
    perplexity: (lines) => perplexity(model, tokenizer, lines),
    dispose() {
      policy.dispose?.();
      model.dispose();
    },
  };
}
