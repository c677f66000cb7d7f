// The Agent interface: what the run loop needs of a model besides its policy.
import type { TokenPolicy } from '@poad/ppo';
import type { GpuAdapterReport } from '@poad/tfjs-kernels';

/**
 * What the training loop needs from a model beyond `@poad/ppo`'s `TokenPolicy`: saving the
 * trainable parts in standard formats, text utilities and a description for the run directory.
 * `createLmAgent` (create-lm-agent.ts) builds one from a `@poad/lora-model` checkpoint.
 */
export interface Agent {
  readonly policy: TokenPolicy;
  /** E.g. "wasm (1 thread)"; recorded in environment.json. */
  readonly backend: string;
  /** The GPU adapter on the webgpu backend (vendor, architecture, features, limits); recorded too. */
  readonly gpu?: GpuAdapterReport;
  /**
   * Model facts for environment.json (parameter counts, config; for a Hub model `hub`: its
   * repository, the revision asked for and the commit loaded).
   */
  readonly info: Record<string, unknown>;
  /**
   * How its policy turns observations into prompts: `plain` or `chat`, and for `chat` the date
   * its template's `strftime_now` sees (`YYYY-MM-DD`). Undefined: `plain`.
   */
  readonly prompt?: { readonly format: 'plain' | 'chat'; readonly date?: string };
  /** Writes the LoRA adapter (PEFT format) and the value head into `dir`. */
  saveTrainable(dir: string): Promise<void>;
  /** Loads an adapter and value head written by `saveTrainable`. */
  loadTrainable(dir: string): Promise<void>;
  /**
   * Reads what `saveTrainable` wrote without attaching it (the trained variables stay the same
   * objects): throws, naming the file, when a file is missing, truncated, corrupted, does not fit
   * the model, or holds a NaN or ±∞.
   */
  checkTrainable(dir: string): Promise<void>;
  /**
   * Called before every training iteration: drops per-iteration caches (e.g. frozen-base
   * features), so that a resumed run computes exactly what an uninterrupted one does.
   */
  beginIteration(): void;
  /** Text of one token id, for the token-credit view. */
  tokenText(id: number): Promise<string>;
  /** Perplexity of the policy (adapter on) on text lines. */
  perplexity(lines: readonly string[]): Promise<number>;
  dispose(): void;
}
