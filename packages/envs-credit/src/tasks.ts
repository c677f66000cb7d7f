import { CreditArgumentError } from './errors.js';
import { type CreditMdp, indexMdp } from './mdp.js';
import { delayedLongTask, delayedTask } from './tasks/delayed.js';
import { keyTokenLongTask, keyTokenTask } from './tasks/key-token.js';
import { loopLongTask, loopTask } from './tasks/loop.js';
import { riskyLongTask, riskyTask } from './tasks/risky.js';

/** The credit tasks: four credit questions, each with a longer variant. */
export const CREDIT_TASKS = [
  'key-token',
  'key-token-long',
  'delayed',
  'delayed-long',
  'loop',
  'loop-long',
  'risky',
  'risky-long',
] as const;

/** One of {@link CREDIT_TASKS}. */
export type CreditTask = (typeof CREDIT_TASKS)[number];

const BUILDERS: Record<CreditTask, () => CreditMdp> = {
  'key-token': keyTokenTask,
  'key-token-long': keyTokenLongTask,
  delayed: delayedTask,
  'delayed-long': delayedLongTask,
  loop: loopTask,
  'loop-long': loopLongTask,
  risky: riskyTask,
  'risky-long': riskyLongTask,
};

const cache = new Map<CreditTask, CreditMdp>();

/** Whether `task` names a credit task (`key-token`, …, without the `credit/` prefix). */
export function isCreditTask(task: unknown): task is CreditTask {
  return typeof task === 'string' && (CREDIT_TASKS as readonly string[]).includes(task);
}

/** The task a task name or registry id names (`loop` and `credit/loop` both give `loop`). */
export function creditTask(task: string, argument = 'creditMdp(task)'): CreditTask {
  const name = typeof task === 'string' && task.startsWith('credit/') ? task.slice(7) : task;
  if (!isCreditTask(name)) {
    throw new CreditArgumentError(
      argument,
      `unknown credit task ${JSON.stringify(task)}; the tasks are ${CREDIT_TASKS.join(', ')} (with or without the "credit/" prefix).`,
    );
  }
  return name;
}

/**
 * The MDP of a credit task at the level of its labels: states (ids, observations, labels),
 * rewards, transition distributions, terminal flags, γ, the start and the step limit. Accepts
 * the task name (`key-token`) or its registry id (`credit/key-token`). The object is shared and
 * frozen; the environment plays exactly it.
 */
export function creditMdp(task: string): CreditMdp {
  const name = creditTask(task);
  let mdp = cache.get(name);
  if (!mdp) {
    mdp = deepFreeze(BUILDERS[name]());
    indexMdp(mdp, `creditMdp(${JSON.stringify(name)})`);
    cache.set(name, mdp);
  }
  return mdp;
}

/** A task name, a registry id or an MDP, resolved to the MDP. */
export function resolveMdp(task: string | CreditMdp, argument: string): CreditMdp {
  if (typeof task === 'string') return creditMdp(creditTask(task, argument));
  indexMdp(task, argument);
  return task;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
