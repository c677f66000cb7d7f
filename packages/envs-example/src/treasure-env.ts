import {
  createRng,
  EnvArgumentError,
  EpisodeOverError,
  InvalidActionError,
  NotResetError,
  ReturnTracker,
  type TextEnv,
  type TextStep,
} from '@poad/envs-core';

/** Options of {@link createTreasureEnv}. */
export interface TreasureOptions {
  /** Number of rooms in the corridor (default 5, at least 2). */
  rooms?: number;
  /** Step limit (default 10). */
  maxSteps?: number;
}

/** The three action labels. They are part of the contract: never change them. */
export const TREASURE_LABELS = ['go left', 'go right', 'dig here'] as const;

const [LEFT, RIGHT, DIG] = TREASURE_LABELS;

/**
 * A treasure hunt in a corridor. The treasure lies in a room drawn from the reset seed (never
 * the first); the agent starts in the first room and hears a jingle when the treasure is next
 * door. Digging in the right room gives +1 and ends the episode; the step limit truncates it.
 */
export class TreasureEnv implements TextEnv {
  readonly id = 'example/treasure';
  private readonly rooms: number;
  private readonly maxSteps: number;
  private readonly tracker = new ReturnTracker(0.9);
  private position = 0;
  private treasure = 1;
  private steps = 0;
  private started = false;
  private done = false;

  constructor(options: TreasureOptions = {}) {
    this.rooms = options.rooms ?? 5;
    this.maxSteps = options.maxSteps ?? 10;
    if (!Number.isInteger(this.rooms) || this.rooms < 2) {
      throw new EnvArgumentError('createTreasureEnv(options.rooms)', 'expected an integer >= 2.');
    }
    if (!Number.isInteger(this.maxSteps) || this.maxSteps < 1) {
      throw new EnvArgumentError(
        'createTreasureEnv(options.maxSteps)',
        'expected an integer >= 1.',
      );
    }
  }

  async reset(options: { seed?: number } = {}): Promise<TextStep> {
    // all randomness comes from the reset seed, so the same seed replays the same episode
    this.treasure = createRng(options.seed ?? 0).int(1, this.rooms);
    this.position = 0;
    this.steps = 0;
    this.started = true;
    this.done = false;
    this.tracker.reset();
    return this.view(0, false, false, {});
  }

  async step(action: string): Promise<TextStep> {
    if (!this.started) throw new NotResetError(this.id);
    if (this.done) throw new EpisodeOverError(this.id);
    const valid = this.actions();
    if (!valid.includes(action)) throw new InvalidActionError(this.id, action, valid);

    if (action === LEFT) this.position -= 1;
    else if (action === RIGHT) this.position += 1;
    const found = action === DIG && this.position === this.treasure;

    this.steps += 1;
    const reward = found ? 1 : 0;
    this.tracker.add(reward);
    const terminated = found;
    const truncated = !terminated && this.steps >= this.maxSteps;
    this.done = terminated || truncated;
    const info: Record<string, unknown> = {};
    if (this.done) {
      info.discountedReturn = this.tracker.value;
      info.length = this.tracker.length;
      info.success = found;
    }
    return this.view(reward, terminated, truncated, info);
  }

  async close(): Promise<void> {}

  /** Valid labels now: no walking through the end walls. */
  private actions(): string[] {
    const list: string[] = [];
    if (this.position > 0) list.push(LEFT);
    if (this.position < this.rooms - 1) list.push(RIGHT);
    list.push(DIG);
    return list;
  }

  private view(
    reward: number,
    terminated: boolean,
    truncated: boolean,
    info: Record<string, unknown>,
  ): TextStep {
    const near = Math.abs(this.treasure - this.position) === 1;
    const sentences = [
      `You stand in room ${this.position + 1} of a corridor of ${this.rooms} rooms.`,
      near ? 'You hear a faint jingle from next door.' : 'All is quiet.',
      terminated ? 'Your spade hits a chest full of coins.' : '',
      'To find the buried treasure, your next step is to',
    ];
    return {
      observation: sentences.filter((s) => s.length > 0).join(' '),
      actions: this.actions(),
      reward,
      terminated,
      truncated,
      info,
    };
  }
}

/** Creates the treasure-hunt environment. */
export function createTreasureEnv(options?: TreasureOptions): TreasureEnv {
  return new TreasureEnv(options);
}
