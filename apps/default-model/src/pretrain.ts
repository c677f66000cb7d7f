// Pretrains the embedded default model: a small LLaMA-architecture decoder (GQA, RoPE, SwiGLU,
// RMSNorm, tied embeddings) trained from scratch with next-token prediction on the generated
// corpus, on the TF.js wasm/cpu backend. Writes a Hugging Face folder through the same
// `saveCausalLM` users' checkpoints go through.
import { readFileSync } from 'node:fs';
import { createCausalLM, type HFModelConfig, saveCausalLM, tokenStats } from '@poad/lora-model';
import { ProgressBar } from '@poad/run-kit';
import { initBackend } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { Tokenizer } from 'tokenizers';

export interface PretrainOptions {
  /**
   * `train.txt` and `heldout.txt` (one text per line, packed into rows of `seqLen`) or, with
   * `samples`, `train.jsonl` and `heldout.jsonl` (one `{ prompt, completion }` per line).
   */
  corpusDir: string;
  /**
   * Prompt–completion samples, one per row: `<s>` prompt completion `</s>`, each encoded as the
   * agent encodes them (the prompt with `<s>`, the completion on its own), right-padded, the
   * loss over every token after `<s>`. Samples longer than `seqLen` tokens are left out.
   */
  samples?: boolean;
  tokenizerJson: string;
  outDir: string;
  seed: number;
  /** Wall-clock budget in seconds; training stops at whichever comes first (time or steps). */
  seconds: number;
  steps: number;
  batch: number;
  seqLen: number;
  lr: number;
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  intermediate: number;
  log?: (s: string) => void;
}

export const DEFAULT_PRETRAIN: Omit<PretrainOptions, 'corpusDir' | 'tokenizerJson' | 'outDir'> = {
  seed: 1,
  seconds: 15 * 60,
  steps: 4000,
  batch: 16,
  seqLen: 96,
  lr: 3e-3,
  hidden: 128,
  layers: 4,
  heads: 4,
  kvHeads: 2,
  intermediate: 352,
};

/**
 * The code model's pretraining (DataSciCoding): one prompt–completion sample per row, up to 512
 * tokens (a fix-it prompt with its failed body and the fix), the default model's architecture.
 */
export const CODE_PRETRAIN: Omit<PretrainOptions, 'corpusDir' | 'tokenizerJson' | 'outDir'> = {
  ...DEFAULT_PRETRAIN,
  samples: true,
  seconds: 25 * 60,
  steps: 3000,
  batch: 8,
  seqLen: 512,
};

/** Model config of the default model for a tokenizer of `vocab` tokens. */
export function defaultModelConfig(
  o: Pick<PretrainOptions, 'hidden' | 'layers' | 'heads' | 'kvHeads' | 'intermediate'>,
  vocab: number,
): HFModelConfig {
  return {
    model_type: 'llama',
    architectures: ['LlamaForCausalLM'],
    vocab_size: Math.ceil(vocab / 64) * 64,
    hidden_size: o.hidden,
    intermediate_size: o.intermediate,
    num_hidden_layers: o.layers,
    num_attention_heads: o.heads,
    num_key_value_heads: o.kvHeads,
    max_position_embeddings: 1024,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    tie_word_embeddings: true,
    attention_bias: false,
    bos_token_id: 1,
    eos_token_id: 2,
    pad_token_id: 0,
    hidden_act: 'silu',
    torch_dtype: 'float32',
  } as HFModelConfig;
}

/** Packs tokenised lines (each followed by </s>) into rows of `seqLen` tokens after a <s>. */
export function packRows(lines: readonly number[][], seqLen: number): number[][] {
  const stream: number[] = [];
  for (const l of lines) stream.push(...l, 2);
  const rows: number[][] = [];
  for (let i = 0; i + seqLen <= stream.length; i += seqLen)
    rows.push([1, ...stream.slice(i, i + seqLen)]);
  return rows;
}

export async function pretrain(
  o: PretrainOptions,
): Promise<{ steps: number; loss: number; heldOutLoss: number; seconds: number }> {
  const log = o.log ?? ((s: string) => process.stderr.write(`${s}\n`));
  const backend = await initBackend('auto');
  log(`backend: ${backend.backend} (${backend.source})`);
  const tokenizerText = readFileSync(o.tokenizerJson, 'utf8');
  const tok = Tokenizer.fromString(tokenizerText);
  const encodeAll = async (file: string) => {
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const out: number[][] = [];
    for (let i = 0; i < lines.length; i += 512) {
      const enc = await tok.encodeBatch(lines.slice(i, i + 512), { addSpecialTokens: false });
      for (const e of enc) out.push(Array.from(e.getIds()));
    }
    return out;
  };
  const encodeSamples = async (file: string) => {
    const samples = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { prompt: string; completion: string });
    const texts = samples.flatMap((x) => [x.prompt, x.completion]);
    const ids: number[][] = [];
    for (let i = 0; i < texts.length; i += 512) {
      const enc = await tok.encodeBatch(texts.slice(i, i + 512), { addSpecialTokens: false });
      for (const e of enc) ids.push(Array.from(e.getIds()));
    }
    return samples
      .map((_, i) => [1, ...ids[2 * i]!, ...ids[2 * i + 1]!, 2])
      .filter((r) => r.length - 1 <= o.seqLen);
  };
  const train = o.samples
    ? await encodeSamples(`${o.corpusDir}/train.jsonl`)
    : packRows(await encodeAll(`${o.corpusDir}/train.txt`), o.seqLen);
  const held = (
    o.samples
      ? await encodeSamples(`${o.corpusDir}/heldout.jsonl`)
      : packRows(await encodeAll(`${o.corpusDir}/heldout.txt`), o.seqLen)
  ).slice(0, 32);
  const vocab = JSON.parse(tokenizerText).model.vocab;
  const config = defaultModelConfig(o, Object.keys(vocab).length);
  const model = createCausalLM(config, { seed: o.seed, fullFineTune: true });
  const vars = model.policyVariables();
  log(
    `model: ${vars.reduce((a, v) => a + v.size, 0).toLocaleString()} parameters; ${train.length} training rows of ${o.samples ? `up to ${o.seqLen}` : o.seqLen} tokens`,
  );
  const opt = tf.train.adam(o.lr, 0.9, 0.95, 1e-8);
  const lossOf = (rows: number[][]) => {
    const s = tokenStats(
      model,
      rows.map((r) => r.slice(0, 1)),
      rows.map((r) => r.slice(1)),
      { training: true },
    );
    s.entropies.dispose();
    return tf.neg(tf.mean(s.logProbs)) as tf.Scalar;
  };
  let seed = o.seed >>> 0;
  const rand = () => {
    seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return seed / 2 ** 32;
  };
  const bar = new ProgressBar({ total: o.steps, unit: 'steps', label: 'pretrain' });
  const start = Date.now();
  let step = 0;
  let ema = Number.NaN;
  while (step < o.steps && (Date.now() - start) / 1000 < o.seconds) {
    const batch = Array.from({ length: o.batch }, () => train[Math.floor(rand() * train.length)]!);
    const progress = step / o.steps;
    (opt as unknown as { learningRate: number }).learningRate =
      o.lr * Math.min(1, (step + 1) / 100) * (0.1 + 0.9 * 0.5 * (1 + Math.cos(Math.PI * progress)));
    const loss = opt.minimize(() => lossOf(batch), true, vars) as tf.Scalar;
    const l = (await loss.data())[0]!;
    loss.dispose();
    ema = Number.isNaN(ema) ? l : 0.95 * ema + 0.05 * l;
    step++;
    bar.update(step, { loss: ema });
  }
  bar.finish();
  const hl = tf.tidy(() => lossOf(held));
  const heldOutLoss = (await hl.data())[0]!;
  hl.dispose();
  await saveCausalLM(model, o.outDir, { tokenizerJson: tokenizerText });
  const seconds = (Date.now() - start) / 1000;
  log(
    `pretrained ${step} steps in ${seconds.toFixed(0)} s: train loss ${ema.toFixed(3)}, held-out loss ${heldOutLoss.toFixed(3)} (perplexity ${Math.exp(heldOutLoss).toFixed(2)}) -> ${o.outDir}`,
  );
  model.dispose();
  opt.dispose();
  return { steps: step, loss: ema, heldOutLoss, seconds };
}
