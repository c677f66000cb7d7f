import {
  EnvArgumentError,
  EpisodeOverError,
  InvalidActionError,
  NotResetError,
  type TextEnv,
  type TextStep,
} from '@poad/envs-core';
import { macroLabels } from './labels.js';
import { MacroController } from './macro.js';
import { observationText } from './observation.js';
import { type OvercookedEnvOptions, resolveOptions } from './options.js';
import { renderSvg } from './render-svg.js';
import { renderText } from './render-text.js';
import { type OvercookedSnapshot, snapshotWorld } from './snapshot.js';
import type { OvercookedTask } from './tasks.js';
import { macroView } from './view.js';
import { World } from './world.js';

/**
 * Overcooked (map A, one agent, 5 x 5 view) as a text environment with macro-actions.
 *
 * Each `step(label)` runs one macro-action to its end and returns its reward
 * Σ_k 0.99^k · r_k over the primitive steps it took (`info.primitiveSteps`). The episode ends on
 * a correct delivery (`terminated`) or when a macro-action ends at or past the primitive step
 * limit (`truncated`). At the end `info` holds `discountedReturn` (Σ over all primitive steps of
 * 0.99^k · r_k), `length` (primitive steps), `macroSteps` and `success`.
 */
export class OvercookedEnv implements TextEnv {
  readonly id: string;
  readonly task: OvercookedTask;
  /** The primitive step limit. */
  readonly maxPrimitiveSteps: number;
  private readonly world: World;
  private readonly controller: MacroController;
  private labels: string[] = [];
  private phase: 'new' | 'running' | 'over' = 'new';
  private macroSteps = 0;
  private readonly strictLimit: boolean;

  constructor(task: string, options: OvercookedEnvOptions = {}) {
    const resolved = resolveOptions(task, options);
    this.task = resolved.task;
    this.id = resolved.task.id;
    this.maxPrimitiveSteps = resolved.maxPrimitiveSteps;
    this.strictLimit = resolved.fixes.strictStepLimit === true;
    this.world = new World(resolved.task, resolved.rewards, resolved.fixes);
    this.controller = new MacroController(this.world, resolved.navigationCache);
  }

  /** Synchronous `reset`. The environment has no randomness: every seed gives the same start. */
  resetSync(options: { seed?: number } = {}): TextStep {
    const seed = options?.seed;
    if (seed !== undefined && !Number.isInteger(seed)) {
      throw new EnvArgumentError(
        'reset({ seed })',
        `expected an integer seed, got ${String(seed)}.`,
      );
    }
    this.world.reset();
    this.controller.reset();
    this.macroSteps = 0;
    this.phase = 'running';
    return this.makeStep(0, { primitiveSteps: 0 }, false, false);
  }

  /** Synchronous `step`: runs the macro-action named by `label` to its end. */
  stepSync(label: string): TextStep {
    if (this.phase === 'new') throw new NotResetError(this.id);
    if (this.phase === 'over') throw new EpisodeOverError(this.id);
    const index = this.labels.indexOf(label);
    if (index < 0) throw new InvalidActionError(this.id, label, [...this.labels]);
    return this.stepIndex(index);
  }

  /** Runs macro-action `index` (environment order) regardless of its current label. */
  stepIndex(index: number): TextStep {
    if (this.phase === 'new') throw new NotResetError(this.id);
    if (this.phase === 'over') throw new EpisodeOverError(this.id);
    if (!Number.isInteger(index) || index < 0 || index >= this.task.macros.length) {
      throw new EnvArgumentError(
        'stepIndex(index)',
        `expected an integer in [0, ${this.task.macros.length - 1}], got ${String(index)}.`,
      );
    }
    const world = this.world;
    const result = this.controller.run(
      index,
      this.strictLimit ? this.maxPrimitiveSteps : Number.POSITIVE_INFINITY,
    );
    this.macroSteps += 1;
    const terminated = world.success;
    const truncated = !terminated && world.envStep >= this.maxPrimitiveSteps;
    const info: Record<string, unknown> = {
      primitiveSteps: result.primitiveSteps,
      macroAction: index,
    };
    if (terminated || truncated) {
      this.phase = 'over';
      info.discountedReturn = world.totalReturn;
      info.length = world.envStep;
      info.macroSteps = this.macroSteps;
      info.success = terminated;
    }
    return this.makeStep(result.reward, info, terminated, truncated);
  }

  /** Starts a new episode (the seed is checked but changes nothing: there is no randomness). */
  async reset(options?: { seed?: number }): Promise<TextStep> {
    return this.resetSync(options);
  }

  /** Runs the macro-action whose current label is `action`. */
  async step(action: string): Promise<TextStep> {
    return this.stepSync(action);
  }

  /** Ends the session; a later `step` needs a `reset` first. Safe to call twice. */
  async close(): Promise<void> {
    this.phase = 'new';
  }

  /** The current action labels (all macro-actions, environment order). */
  get actions(): readonly string[] {
    return this.labels;
  }

  /** A plain-data copy of the true state. */
  snapshot(): OvercookedSnapshot {
    return snapshotWorld(this.world);
  }

  /** A readable text grid of the true state. */
  render(): string {
    return renderText(this.snapshot());
  }

  /** An SVG picture of the true state. */
  renderSvg(title?: string): string {
    return renderSvg(this.snapshot(), title);
  }

  private makeStep(
    reward: number,
    info: Record<string, unknown>,
    terminated: boolean,
    truncated: boolean,
  ): TextStep {
    const view = macroView(this.world);
    this.labels = macroLabels(this.task, view);
    return {
      observation: observationText(this.task, view),
      actions: this.labels,
      reward,
      terminated,
      truncated,
      info,
    };
  }
}

/**
 * Creates an Overcooked environment. `task` is `tomato-salad` (the original's v4) or
 * `tomato-lettuce-salad` (v3), with or without the `overcooked/` prefix.
 */
export function createOvercookedEnv(task: string, options?: OvercookedEnvOptions): OvercookedEnv {
  return new OvercookedEnv(task, options);
}
