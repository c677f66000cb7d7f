import type { TextEnv, TextStep } from '@poad/envs-core';

export const DOOR_LABELS = ['open the red door', 'open the blue door'] as const;

/**
 * The smallest environment a user could write: one decision per episode, +1 for the red door.
 * Written against the `TextEnv` interface only, as a library user's own environment would be.
 */
export class DoorEnv implements TextEnv {
  readonly id = 'test/doors';
  private over = true;

  constructor(readonly index = 0) {}

  async reset(): Promise<TextStep> {
    this.over = false;
    return {
      observation: 'You stand in a hall with a red door and a blue door. You',
      actions: DOOR_LABELS,
      reward: 0,
      terminated: false,
      truncated: false,
      info: {},
    };
  }

  async step(action: string): Promise<TextStep> {
    if (this.over) throw new Error('step after the end of an episode; call reset');
    if (!(DOOR_LABELS as readonly string[]).includes(action))
      throw new Error(`unknown action ${JSON.stringify(action)}`);
    this.over = true;
    const reward = action === DOOR_LABELS[0] ? 1 : 0;
    return {
      observation: reward ? 'The red door opens onto a garden.' : 'The blue door is locked.',
      actions: DOOR_LABELS,
      reward,
      terminated: true,
      truncated: false,
      info: { success: reward === 1 },
    };
  }

  async close(): Promise<void> {}
}
