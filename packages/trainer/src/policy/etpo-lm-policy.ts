/**
 * ETPO's language-model policy: `LmPolicy`'s actor with a Q critic over the vocabulary (a second
 * LoRA adapter), its Polyak-averaged target (a third), and soft values in place of the value
 * head's.
 */
import {
  type EtpoPolicy,
  flatAllowed,
  type Reference,
  softStats,
  type VocabularyScores,
} from '@poad/etpo';
import type { TextTokenizer } from '@poad/hf-files';
import { type CausalLM, LoraAdapter } from '@poad/lora-model';
import { nextTokenSets, type TokenBatch } from '@poad/ppo';
import * as tf from '@tensorflow/tfjs-core';
import { noActions } from './action-rows.js';
import { LmPolicy } from './lm-policy.js';
import { tokenLogProbs } from './token-log-probs.js';

/** Options of {@link EtpoLmPolicy}. */
export interface EtpoLmPolicyOptions {
  /** β, the weight of KL(π ‖ π̄). */
  beta: number;
  /** π̄: the base model with its adapters off (ETPO's choice) or the uniform distribution. */
  reference: 'base' | 'uniform';
  /** Q = criticScale × the critic head's output, online and target critic alike (default 1). */
  criticScale?: number;
  /** Seed of the critic adapter; the actor's seed makes the critic start equal to the actor. */
  seed: number;
  stopTokenIds?: readonly number[];
}

/**
 * The language-model agent of ETPO: the actor is the model's LoRA adapter (as for POAD); the
 * critic is a second LoRA adapter on the same frozen base whose language-model head gives
 * Q(o, w_<k, ·) over the vocabulary, created with the actor's adapter configuration and seed so that
 * it starts as the actor does (ETPO initialises the critic from the policy); the target critic is
 * a third adapter, a Polyak average of the critic. Token and prompt values are soft values under
 * the target critic, E_π[Q̄] − β·KL(π ‖ π̄), which the rollout stores for `softBad`. Q of
 * either critic is `criticScale` times its head's logits (`qRows`, the one place Q is made).
 */
export class EtpoLmPolicy extends LmPolicy implements EtpoPolicy {
  readonly critic: LoraAdapter;
  readonly target: LoraAdapter;
  readonly beta: number;
  readonly reference: 'base' | 'uniform';
  readonly criticScale: number;

  constructor(model: CausalLM, tokenizer: TextTokenizer, o: EtpoLmPolicyOptions) {
    super(model, tokenizer, o.stopTokenIds);
    const actor = model.adapter;
    if (!actor) throw new Error('EtpoLmPolicy: the model has no LoRA adapter to act with');
    this.beta = o.beta;
    this.reference = o.reference;
    this.criticScale = o.criticScale ?? 1;
    const cfg = {
      r: actor.config.r,
      alpha: actor.config.alpha,
      dropout: actor.config.dropout,
      targetModules: actor.config.targetModules,
    };
    this.critic = LoraAdapter.create(model.config, cfg, o.seed);
    this.target = LoraAdapter.create(model.config, cfg, o.seed);
  }

  override get criticVariables(): tf.Variable[] {
    return this.critic.variables();
  }

  get targetVariables(): tf.Variable[] {
    return this.target.variables();
  }

  /** No value head: nothing to prepare. */
  override async prepareValues(): Promise<void> {}

  /**
   * One batch per step: ETPO's values are soft values over the vocabulary (three adapters'
   * logits per row), whose size a rollout-wide batch would multiply.
   */
  override get valuesAtRolloutEnd(): boolean {
    return false;
  }

  private logitRows(
    prompts: readonly Int32Array[],
    actions: readonly Int32Array[],
    adapter: LoraAdapter | undefined,
  ): tf.Tensor2D {
    return this.model.head(this.hiddenRows(prompts, actions, adapter));
  }

  /** The actor's logits (the model's LoRA adapter on). */
  private policyLogitRows(
    prompts: readonly Int32Array[],
    actions: readonly Int32Array[],
  ): tf.Tensor2D {
    return this.logitRows(prompts, actions, this.model.adapter ?? undefined);
  }

  /** Q over the vocabulary of a critic adapter (online or target): criticScale × its logits. */
  private qRows(
    prompts: readonly Int32Array[],
    actions: readonly Int32Array[],
    adapter: LoraAdapter,
  ): tf.Tensor2D {
    const logits = this.logitRows(prompts, actions, adapter);
    return this.criticScale === 1 ? logits : (tf.mul(logits, this.criticScale) as tf.Tensor2D);
  }

  private referenceRows(prompts: readonly Int32Array[], actions: readonly Int32Array[]): Reference {
    return this.reference === 'uniform'
      ? 'uniform'
      : (tf.logSoftmax(this.logitRows(prompts, actions, undefined)) as tf.Tensor2D);
  }

  private softValues(
    prompts: readonly Int32Array[],
    actions: readonly Int32Array[],
    allowed: readonly Int32Array[] | undefined,
  ): tf.Tensor1D {
    const s = softStats(
      this.policyLogitRows(prompts, actions),
      this.qRows(prompts, actions, this.target),
      this.referenceRows(prompts, actions),
      this.beta,
      allowed,
    );
    return s.softValue;
  }

  override tokenValues(batch: TokenBatch): tf.Tensor1D {
    return this.softValues(
      batch.prompts,
      batch.actions,
      batch.allowed ? flatAllowed(batch.allowed) : undefined,
    );
  }

  override promptValues(
    prompts: readonly Int32Array[],
    allowed?: readonly Int32Array[],
  ): tf.Tensor1D {
    return this.softValues(prompts, noActions(prompts), allowed);
  }

  /**
   * The reference π̄ of the soft values over one state's label tree: for each label (its ids
   * after `prompt`), log π̄(w_k | s, w_<k) of each of its tokens renormalised over the tokens
   * that continue some label after w_<k, as the KL term of `tokenSpace: 'labels'` sees it: the
   * base model's (adapters off) for `reference: 'base'`, uniform over those tokens for
   * `'uniform'`. The labels must be prefix-free (`nextTokenSets` of `@poad/ppo`).
   */
  async labelReferenceLogProbs(
    prompt: Int32Array,
    labels: readonly Int32Array[],
  ): Promise<Float32Array[]> {
    const allowed = nextTokenSets(labels);
    if (this.reference === 'uniform')
      return allowed.map((sets) => Float32Array.from(sets, (ids) => -Math.log(ids.length)));
    const s = tokenLogProbs(
      this.model,
      {
        prompts: labels.map(() => prompt),
        actions: labels,
        width: Math.max(...labels.map((l) => l.length)),
        allowed,
      },
      'base',
    );
    s.entropies.dispose();
    const flat = (await s.logProbs.data()) as Float32Array;
    s.logProbs.dispose();
    let o = 0;
    return labels.map((l) => {
      o += l.length;
      return flat.slice(o - l.length, o);
    });
  }

  criticQ(batch: TokenBatch): tf.Tensor2D {
    return this.qRows(batch.prompts, batch.actions, this.critic);
  }

  vocabularyScores(batch: TokenBatch): VocabularyScores {
    return {
      policyLogits: this.policyLogitRows(batch.prompts, batch.actions),
      q: this.qRows(batch.prompts, batch.actions, this.critic),
      reference: this.referenceRows(batch.prompts, batch.actions),
    };
  }

  dispose(): void {
    this.critic.dispose();
    this.target.dispose();
  }
}
