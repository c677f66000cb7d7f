import { type EnvFactory, registerEnv } from '@poad/envs-core';
import { type CreditEnvOptions, createCreditEnv } from './env.js';
import { optimalReturn } from './optimal.js';
import { CREDIT_PRESETS } from './presets.js';
import { CREDIT_TASKS, type CreditTask, creditMdp } from './tasks.js';

const DESCRIPTIONS: Record<CreditTask, string> = {
  'key-token': 'Credit: one word in the middle of a seven-word label decides success',
  'key-token-long': 'Credit: one word in the middle of a fourteen-word label decides success',
  delayed: 'Credit: a decision at turn 1 whose outcome shows after 4 filler turns',
  'delayed-long': 'Credit: a decision at turn 1 whose outcome shows after 12 filler turns',
  loop: 'Credit: a loop action that wastes a turn but appears in successful episodes',
  'loop-long': 'Credit: the loop task behind three risky rooms',
  risky: 'Credit: a risky shortcut against a safe walk of 3 rooms',
  'risky-long': 'Credit: a risky shortcut against a safe walk of 8 rooms',
};

const factories = new Map<CreditTask, EnvFactory<CreditEnvOptions>>(
  CREDIT_TASKS.map((task) => [
    task,
    (options?: CreditEnvOptions) => createCreditEnv(task, options),
  ]),
);

/**
 * Registers `credit/<task>` for every credit task in the `@poad/envs-core` registry, with its
 * step limit, discount, exact optimal return and the training presets (`CREDIT_PRESETS`). Safe
 * to call more than once. Returns the ids.
 */
export function registerCreditEnvs(): string[] {
  return CREDIT_TASKS.map((task) => {
    const mdp = creditMdp(task);
    registerEnv(mdp.id, factories.get(task)!, {
      description: DESCRIPTIONS[task],
      maxSteps: mdp.maxSteps,
      actionSpace: 'discrete',
      gamma: mdp.gamma,
      optimalReturn: optimalReturn(mdp),
      presets: CREDIT_PRESETS,
    });
    return mdp.id;
  });
}
