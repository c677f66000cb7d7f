import {
  EnvArgumentError,
  EpisodeOverError,
  InvalidActionError,
  NotResetError,
  ReturnTracker,
  type TextEnv,
  type TextStep,
} from '@poad/envs-core';
import { EntertainmentModel } from './entertainment.js';
import { FoodPreparationModel } from './food-preparation.js';
import { effectiveMask, type VirtualHomeModel } from './model.js';
import { foodNouns, isVirtualHomeTask, VIRTUALHOME_TASKS, type VirtualHomeTask } from './tasks.js';

/** Options of {@link createVirtualHomeEnv}. Every quirk fix is opt-in (off = the paper's env). */
export interface VirtualHomeOptions {
  /** Step limit (default 50). Rejected actions count as steps. */
  maxSteps?: number;
  /** Discount of the logged return `info.discountedReturn` (default 0.95). */
  gamma?: number;
  /** Opt-in fixes of the dynamics quirks documented in the README. */
  fixes?: {
    /** Entertainment: offer the walk to the snack that can be seen (quirk 1). */
    deadlock?: boolean;
    /** Entertainment: offer "stand up from the sofa" while seated (quirk 2). */
    sittingTrap?: boolean;
    /** Offer only actions that change the state (quirk 3); if none would, the set is kept. */
    offeredNoOps?: boolean;
    /** Food preparation: walking to the held item keeps the agent in its room (quirk 4). */
    teleport?: boolean;
  };
}

/** Data in `TextStep.info` after every step. */
export interface VirtualHomeStepInfo {
  /** Index of the action in the task's full action list (envs.md §1.4). */
  actionIndex: number;
  /** False when the simulator rejected the action (nothing changed, the step still counted). */
  executed: boolean;
  /** At episode end: Σ gamma^(t-1) r_t. */
  discountedReturn?: number;
  /** At episode end: steps taken. */
  length?: number;
  /** At episode end: whether the task was completed. */
  success?: boolean;
}

/**
 * A VirtualHome task as a `TextEnv` (id `virtualhome/<task>`). The environment is
 * deterministic: reset always gives the same start state, whatever the seed.
 * `resetSync`/`stepSync` do the same as `reset`/`step` without a promise.
 */
export class VirtualHomeEnv implements TextEnv {
  readonly id: string;
  /** Every action label of the task, by index (envs.md §1.4). */
  readonly allLabels: readonly string[];
  private readonly model: VirtualHomeModel;
  private readonly labelIndex: Map<string, number>;
  private readonly listCache = new Map<number, readonly string[]>();
  private readonly tracker: ReturnTracker;
  private readonly maxSteps: number;
  private readonly fixNoOps: boolean;
  private mask = 0;
  private steps = 0;
  private started = false;
  private done = false;

  constructor(
    readonly task: VirtualHomeTask,
    options: VirtualHomeOptions = {},
  ) {
    if (!isVirtualHomeTask(task)) {
      throw new EnvArgumentError(
        'createVirtualHomeEnv(task)',
        `unknown task ${JSON.stringify(task)}; choose one of ${VIRTUALHOME_TASKS.join(', ')}.`,
      );
    }
    const maxSteps = options.maxSteps ?? 50;
    if (!Number.isInteger(maxSteps) || maxSteps < 1) {
      throw new EnvArgumentError(
        'createVirtualHomeEnv(options.maxSteps)',
        `expected a positive integer, got ${String(maxSteps)}.`,
      );
    }
    const fixes = options.fixes ?? {};
    this.id = `virtualhome/${task}`;
    this.model =
      task === 'entertainment'
        ? new EntertainmentModel({ fixDeadlock: fixes.deadlock, fixSittingTrap: fixes.sittingTrap })
        : new FoodPreparationModel(foodNouns(task), { fixTeleport: fixes.teleport });
    this.allLabels = this.model.labels;
    this.labelIndex = new Map(this.allLabels.map((label, i) => [label, i]));
    this.tracker = new ReturnTracker(options.gamma ?? 0.95);
    this.maxSteps = maxSteps;
    this.fixNoOps = fixes.offeredNoOps === true;
  }

  /** Starts an episode. The seed is accepted for the interface but changes nothing. */
  async reset(_options?: { seed?: number }): Promise<TextStep> {
    return this.resetSync();
  }

  /** Applies one action label; it must be one of the current `actions`. */
  async step(action: string): Promise<TextStep> {
    return this.stepSync(action);
  }

  async close(): Promise<void> {}

  /** Synchronous `reset`. */
  resetSync(): TextStep {
    this.model.reset();
    this.tracker.reset();
    this.steps = 0;
    this.started = true;
    this.done = false;
    this.mask = this.currentMask();
    return {
      observation: this.model.observation(),
      actions: this.labelsOf(this.mask),
      reward: 0,
      terminated: false,
      truncated: false,
      info: {},
    };
  }

  /** Synchronous `step`. */
  stepSync(action: string): TextStep {
    if (!this.started) throw new NotResetError(this.id);
    if (this.done) throw new EpisodeOverError(this.id);
    const a = this.labelIndex.get(action);
    if (a === undefined || (this.mask & (1 << a)) === 0) {
      throw new InvalidActionError(this.id, action, this.labelsOf(this.mask));
    }
    const executed = this.model.apply(a);
    this.steps += 1;
    const terminated = this.model.success();
    const reward = terminated ? 1 : 0;
    this.tracker.add(reward);
    const truncated = !terminated && this.steps >= this.maxSteps;
    this.done = terminated || truncated;
    this.mask = this.currentMask();
    const info: VirtualHomeStepInfo = { actionIndex: a, executed };
    if (this.done) {
      info.discountedReturn = this.tracker.value;
      info.length = this.steps;
      info.success = terminated;
    }
    return {
      observation: this.model.observation(),
      actions: this.labelsOf(this.mask),
      reward,
      terminated,
      truncated,
      info: info as unknown as Record<string, unknown>,
    };
  }

  private currentMask(): number {
    const offered = this.model.validMask();
    if (!this.fixNoOps) return offered;
    const useful = offered & effectiveMask(this.model);
    return useful === 0 ? offered : useful;
  }

  /** The labels of a mask in ascending index order (one frozen array per distinct mask). */
  private labelsOf(mask: number): readonly string[] {
    let list = this.listCache.get(mask);
    if (list === undefined) {
      list = Object.freeze(this.allLabels.filter((_, i) => (mask & (1 << i)) !== 0));
      this.listCache.set(mask, list);
    }
    return list;
  }
}

/** Creates the VirtualHome environment for `task` (see `VIRTUALHOME_TASKS`). */
export function createVirtualHomeEnv(
  task: VirtualHomeTask,
  options?: VirtualHomeOptions,
): VirtualHomeEnv {
  return new VirtualHomeEnv(task, options);
}
