import type { ChatTemplate, TextTokenizer } from '@poad/hf-files';
import {
  type CausalLM,
  candidateTokenLogProbs,
  generateBatch,
  type LoraAdapter,
  scoreContinuations,
  tokenStats,
  valuesOf,
} from '@poad/lora-model';
import type {
  GeneratedAction,
  GenerateOptions,
  IterationPhase,
  TokenBatch,
  TokenPolicy,
  TokenScores,
} from '@poad/ppo';
import { setGpuPhase } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';

/** Feature rows `row .. row + n` of a tensor still on the device. */
interface DeviceRows {
  readonly bank: tf.Tensor2D;
  readonly row: number;
  readonly n: number;
}

const key = (p: ArrayLike<number>, a: ArrayLike<number>) =>
  `${Array.prototype.join.call(p, ',')}|${Array.prototype.join.call(a, ',')}`;

/** Most padded rows (samples × longest sequence) of one frozen-base pass of `prepareValues`. */
const FEATURE_PASS_ROWS = 16_384;

/**
 * `items` in consecutive groups whose padded size (count × longest `length`) stays within
 * {@link FEATURE_PASS_ROWS}; an item longer than that goes alone.
 */
function passes(items: readonly number[], length: (i: number) => number): number[][] {
  const out: number[][] = [];
  let longest = 0;
  for (const i of items) {
    const last = out.at(-1);
    const l = length(i);
    if (last && (last.length + 1) * Math.max(longest, l) <= FEATURE_PASS_ROWS) {
      last.push(i);
      longest = Math.max(longest, l);
    } else {
      out.push([i]);
      longest = l;
    }
  }
  return out;
}

/**
 * How an observation becomes the prompt the policy scores and samples from (`--prompt-format`).
 *
 * - `plain`: `<s>` (the tokenizer's BOS, when it has one) + the observation's ids; a candidate
 *   label's ids are those of `' ' + label`, since labels continue the observation's last sentence
 *   (`… You decide to` + ` open the door`). What the embedded models were trained on.
 * - `chat`: the observation is the user message of the model's chat template, rendered with the
 *   generation prompt (`add_generation_prompt`), so that the prompt ends where the assistant's
 *   reply begins; the text is tokenized without adding special tokens (the template writes its
 *   own BOS and turn markers, which tokenize to their special ids). A candidate label is the whole
 *   assistant reply: its ids are those of the label alone, without the leading space of `plain`.
 *   The prompt's ids stay the same for every label (one KV cache per prompt), and for ChatML
 *   (Qwen) and Llama 3.x, whose generation prompts end in a newline that their pre-tokenizers
 *   never join to a following word, they are also how the tokenizer splits `rendered + label`.
 *   No end-of-turn token is appended, so a label is scored on its own tokens only, as in `plain`
 *   (TWOSOME's normalisation included).
 *   Generated text (open action spaces) continues in the assistant turn up to a stop token.
 *   `now` is the clock of the template's `strftime_now` (Llama 3.x writes today's date into its
 *   system turn): a run fixes it to the date recorded in its config.json, so that every prompt,
 *   also after `--resume` on another day, renders the same.
 */
export type PromptFormat =
  | { readonly kind: 'plain' }
  | { readonly kind: 'chat'; readonly template: ChatTemplate; readonly now: Date };

/**
 * Adapts a `@poad/lora-model` causal LM to `@poad/ppo`'s `TokenPolicy`:
 * - prompts and candidate labels are tokenized as the {@link PromptFormat} says (default
 *   `plain`: `<s>` + the observation's ids, a label's ids those of `' ' + label`, i.e. the tokens
 *   of `observation + ' ' + label` after the prompt with a byte-level BPE), cached per string;
 * - the actor is the LoRA policy (`tokenStats`: full-vocabulary log-probs and entropies, or
 *   renormalised over the label tree's continuations when the batch carries `allowed`);
 * - the critic is the value head on the frozen base's final hidden states, whose features are
 *   computed once per rollout in `prepareValues` and reused across PPO epochs;
 * - candidate scoring shares each prompt's KV cache (`scoreContinuations`).
 */
export class LmPolicy implements TokenPolicy {
  private readonly promptCache = new Map<string, Int32Array>();
  private readonly labelCache = new Map<string, Int32Array>();
  /**
   * Base features by (prompt, action): host copies (CPU backends), or rows of a tensor of
   * {@link pending} (GPU backends).
   */
  private features = new Map<string, Float32Array | DeviceRows>();
  /**
   * On a GPU backend, the features an iteration computes stay on the device (no host read), held
   * here until the feature cache is cleared.
   */
  private pending: tf.Tensor2D[] = [];
  private format: PromptFormat = { kind: 'plain' };
  /**
   * Tokens generated between two reads of the drawn ids on webgpu (`stopCheckEvery` of
   * `generateBatch`) when a call does not say (training passes the run option `stopCheckEvery`,
   * default 8); 1 reads after every token. A larger value waits for the GPU less often and costs
   * at most that many − 1 decoder steps after the last row stops; the tokens are the same for
   * every value. cpu and wasm sample on the host and ignore it.
   */
  stopCheckEvery = 1;

  constructor(
    readonly model: CausalLM,
    readonly tokenizer: TextTokenizer,
    readonly stopTokenIds: readonly number[] = tokenizer.eosId === undefined
      ? []
      : [tokenizer.eosId],
  ) {}

  /**
   * Samples an action for an open action space with the LoRA policy and the KV cache. The ids are
   * returned exactly as generated (stop token included); the text is their decoding without
   * special tokens. The seed of each call is drawn from the trainer's generator.
   */
  async generate(prompt: Int32Array, options: GenerateOptions): Promise<GeneratedAction> {
    return (await this.generateBatch([prompt], options))[0]!;
  }

  /**
   * {@link generate} for several prompts at once: one decoder pass per token for all of them. The
   * seeds are drawn from the trainer's generator in prompt order, as calls of `generate` would
   * draw them, so each prompt gets what `generate` would give it.
   */
  async generateBatch(
    prompts: readonly Int32Array[],
    options: GenerateOptions,
  ): Promise<GeneratedAction[]> {
    const seeds = prompts.map(() => Math.floor(options.random() * 2 ** 31));
    const out = await generateBatch(
      this.model,
      prompts.map((p) => Array.from(p)),
      {
        maxNewTokens: options.maxTokens,
        temperature: options.greedy ? 0 : options.temperature,
        topK: options.topK,
        stopTokenIds: [...this.stopTokenIds],
        seeds,
        stopCheckEvery: options.stopCheckEvery ?? this.stopCheckEvery,
      },
    );
    return Promise.all(
      out.map(async (o) => {
        const ids = Int32Array.from(o.tokens);
        // Models may pad their vocabulary past the tokenizer's (e.g. to a multiple of 64): such
        // ids stay in the stored action exactly as sampled but have no text.
        const known = Array.from(ids).filter((t) => t < this.tokenizer.vocabSize);
        return {
          tokenIds: ids,
          text: await this.tokenizer.decode(known, { skipSpecialTokens: true }),
        };
      }),
    );
  }

  /** How observations become prompts (default `plain`). */
  get promptFormat(): PromptFormat {
    return this.format;
  }

  /**
   * Switches how observations become prompts and labels their ids (see {@link PromptFormat});
   * set it before the first prompt is encoded, as `createLmAgent` does.
   */
  setPromptFormat(format: PromptFormat): void {
    this.format = format;
    this.promptCache.clear();
    this.labelCache.clear();
  }

  /**
   * The trainer's phase (acting, values, update) becomes the GPU phase that the programs and
   * reads that follow are counted in (`gpuCounters` of `@poad/tfjs-kernels`, on webgpu).
   */
  enterPhase(phase: IterationPhase): void {
    setGpuPhase(phase);
  }

  /** Forgets cached base features (see `Agent.beginIteration`). */
  clearFeatureCache(): void {
    this.features = new Map();
    tf.dispose(this.pending.splice(0));
  }

  get actorVariables(): tf.Variable[] {
    return this.model.policyVariables();
  }

  get criticVariables(): tf.Variable[] {
    return this.model.valueVariables();
  }

  async encodePrompt(observation: string): Promise<Int32Array> {
    let ids = this.promptCache.get(observation);
    if (!ids) {
      const f = this.format;
      if (f.kind === 'chat') {
        const text = f.template.render([{ role: 'user', content: observation }], {
          addGenerationPrompt: true,
          now: f.now,
        });
        ids = Int32Array.from(await this.tokenizer.encode(text, { addSpecialTokens: false }));
      } else {
        const body = await this.tokenizer.encode(observation, { addSpecialTokens: false });
        const bos = this.tokenizer.bosId;
        ids = Int32Array.from(bos === undefined ? body : [bos, ...body]);
      }
      if (this.promptCache.size > 50_000) this.promptCache.clear();
      this.promptCache.set(observation, ids);
    }
    return ids;
  }

  async encodeContinuations(
    _observation: string,
    candidates: readonly string[],
  ): Promise<Int32Array[]> {
    return Promise.all(
      candidates.map(async (label) => {
        let ids = this.labelCache.get(label);
        if (!ids) {
          // In the chat format the label starts the assistant's turn: no leading space.
          const text = this.format.kind === 'chat' ? label : ` ${label}`;
          ids = Int32Array.from(await this.tokenizer.encode(text, { addSpecialTokens: false }));
          this.labelCache.set(label, ids);
        }
        return ids;
      }),
    );
  }

  scoreTokens(batch: TokenBatch): TokenScores {
    const s = tokenStats(
      this.model,
      batch.prompts.map((p) => Array.from(p)),
      batch.actions.map((a) => Array.from(a)),
      batch.allowed ? { allowed: batch.allowed } : {},
    );
    return { logProbs: s.logProbs, entropies: s.entropies };
  }

  /** TWOSOME's update: each prompt once, its KV cache shared by its candidates (differentiable). */
  scoreCandidateTokens(
    prompts: readonly Int32Array[],
    candidates: readonly (readonly Int32Array[])[],
  ): tf.Tensor1D {
    return candidateTokenLogProbs(
      this.model,
      prompts.map((p) => Array.from(p)),
      candidates.map((c) => c.map((x) => Array.from(x))),
    );
  }

  async scoreCandidates(
    prompts: readonly Int32Array[],
    candidates: readonly (readonly Int32Array[])[],
  ): Promise<Float32Array[][]> {
    const out = await scoreContinuations(
      this.model,
      prompts.map((p) => Array.from(p)),
      candidates.map((c) => c.map((x) => Array.from(x))),
    );
    return out.map((perPrompt) => perPrompt.map((lp) => Float32Array.from(lp)));
  }

  /**
   * On webgpu a rollout's values are computed in one batch when it ends (`valuesAtRolloutEnd` of
   * `@poad/ppo`): the frozen base runs over all its samples in a few passes instead of one pass
   * per step, each of which costs the same number of GPU programs whatever its size. CPU backends
   * keep one batch per step.
   */
  get valuesAtRolloutEnd(): boolean {
    return tf.getBackend() === 'webgpu';
  }

  async prepareValues(
    prompts: readonly Int32Array[],
    actions: readonly Int32Array[],
  ): Promise<void> {
    // On a GPU the rows stay on the device for the whole iteration (the rollout's values and the
    // update's critic slice them there; `clearFeatureCache` frees them when the next iteration
    // begins): no host read. Elsewhere they are read now.
    const onDevice = tf.getBackend() === 'webgpu';
    const todo: number[] = [];
    prompts.forEach((p, i) => {
      if (!this.features.has(key(p, actions[i]!))) todo.push(i);
    });
    if (todo.length === 0) return;
    if (this.features.size > 20_000) this.clearFeatureCache();
    if (onDevice) {
      // Passes of at most FEATURE_PASS_ROWS padded rows (a rollout's worth at once, bounded).
      for (const part of passes(todo, (i) => prompts[i]!.length + actions[i]!.length)) {
        const t = tf.tidy(() =>
          this.baseRows(
            part.map((i) => prompts[i]!),
            part.map((i) => actions[i]!),
          ),
        );
        this.pending.push(t);
        let row = 0;
        for (const i of part) {
          const n = Math.max(1, actions[i]!.length);
          this.features.set(key(prompts[i]!, actions[i]!), { bank: t, row, n });
          row += n;
        }
      }
      return;
    }
    const t = tf.tidy(() =>
      this.baseRows(
        todo.map((i) => prompts[i]!),
        todo.map((i) => actions[i]!),
      ),
    );
    const dim = this.model.config.hiddenSize;
    const data = (await t.data()) as Float32Array;
    t.dispose();
    let row = 0;
    for (const i of todo) {
      const n = Math.max(1, actions[i]!.length);
      this.features.set(key(prompts[i]!, actions[i]!), data.slice(row * dim, (row + n) * dim));
      row += n;
    }
  }

  tokenValues(batch: TokenBatch): tf.Tensor1D {
    return valuesOf(this.model, this.featureRows(batch.prompts, batch.actions));
  }

  promptValues(prompts: readonly Int32Array[]): tf.Tensor1D {
    const empty = new Int32Array(0);
    return valuesOf(
      this.model,
      this.featureRows(
        prompts,
        prompts.map(() => empty),
      ),
    );
  }

  /**
   * Frozen-base features for each row: one per action token (the state before it), or one (the
   * last prompt token) for an empty action. Cached rows are reused; others are computed now. The
   * rows come from a few tensors (the device's banks, the rows computed now, or on CPU backends
   * each sample's uploaded host copy), concatenated and gathered with one index, a program or two
   * whatever the number of samples; a concatenation already in order is returned as it is.
   */
  private featureRows(prompts: readonly Int32Array[], actions: readonly Int32Array[]): tf.Tensor2D {
    const dim = this.model.config.hiddenSize;
    const cached = prompts.map((p, i) => this.features.get(key(p, actions[i]!)));
    const missing = prompts.flatMap((_, i) => (cached[i] === undefined ? [i] : []));
    return tf.tidy(() => {
      const fresh = missing.length
        ? this.baseRows(
            missing.map((i) => prompts[i]!),
            missing.map((i) => actions[i]!),
          )
        : null;
      // The tensors the rows come from, in order of first use, and where each starts in their
      // concatenation.
      const sources: tf.Tensor2D[] = [];
      const start = new Map<tf.Tensor2D, number>();
      let rowsIn = 0;
      const firstRow = (t: tf.Tensor2D) => {
        let s = start.get(t);
        if (s === undefined) {
          s = rowsIn;
          rowsIn += t.shape[0];
          start.set(t, s);
          sources.push(t);
        }
        return s;
      };
      const index: number[] = [];
      let freshRow = 0;
      prompts.forEach((_, i) => {
        const n = Math.max(1, actions[i]!.length);
        const c = cached[i];
        let from: number;
        if (c instanceof Float32Array) {
          from = firstRow(tf.tensor2d(c, [n, dim]));
        } else if (c) {
          from = firstRow(c.bank) + c.row;
        } else {
          from = firstRow(fresh!) + freshRow;
          freshRow += n;
        }
        for (let k = 0; k < n; k++) index.push(from + k);
      });
      // No stop-gradient needed: the base weights are constants, and the critic's gradients are
      // taken w.r.t. the value-head variables only.
      const all = sources.length === 1 ? sources[0]! : tf.concat(sources, 0);
      // A cached bank is never handed out: the caller owns (and disposes) what is returned.
      const owned = sources.length > 1 || !this.pending.includes(all);
      const inOrder = index.length === all.shape[0] && index.every((r, k) => r === k);
      return owned && inOrder ? all : (tf.gather(all, tf.tensor1d(index, 'int32')) as tf.Tensor2D);
    });
  }

  /** Base hidden states (adapter off) at the positions that predict each action token. */
  private baseRows(prompts: readonly Int32Array[], actions: readonly Int32Array[]): tf.Tensor2D {
    return this.hiddenRows(prompts, actions, undefined);
  }

  /**
   * Final hidden states with `adapter` (undefined: the frozen base) at the positions that predict
   * each action token, rows concatenated: one per action token, or one (the last prompt token)
   * for an empty action.
   */
  protected hiddenRows(
    prompts: readonly Int32Array[],
    actions: readonly Int32Array[],
    adapter: LoraAdapter | undefined,
  ): tf.Tensor2D {
    const seq = Math.max(...prompts.map((p, i) => p.length + actions[i]!.length));
    const ids = new Int32Array(prompts.length * seq);
    const rows: number[] = [];
    prompts.forEach((p, i) => {
      const a = actions[i]!;
      ids.set(p, i * seq);
      ids.set(a, i * seq + p.length);
      const n = Math.max(1, a.length);
      for (let k = 0; k < n; k++) rows.push(i * seq + p.length - 1 + k);
    });
    const { hidden } = this.model.forward({ ids, batch: prompts.length, seq, adapter });
    return tf.gather(hidden, tf.tensor1d(rows, 'int32')) as tf.Tensor2D;
  }
}
