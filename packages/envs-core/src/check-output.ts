import { EnvOutputError, type EnvOutputSite } from './errors.js';
import type { TextStep } from './types.js';

/**
 * Checks one `reset`/`step` result of an environment before a learner sees it: an object with a
 * string observation, a finite numeric reward, boolean `terminated` and `truncated`, an info
 * object, and `actions` either `null` (open action space) or a list of non-empty strings that is
 * non-empty while the episode runs. `wasOpen` is whether the episode's previous result had an open
 * action space (`null` at a reset): the kind of action space may not change mid-episode (an empty
 * list on the step that ends an episode is accepted either way).
 * Returns whether this result's action space is open.
 * @throws EnvOutputError naming the env, its index, episode and step, and the field at fault.
 */
export function checkEnvOutput(
  out: TextStep,
  site: EnvOutputSite,
  wasOpen: boolean | null,
): boolean {
  const fail = (field: string, problem: string): never => {
    throw new EnvOutputError(site, field, problem);
  };
  if (out === null || typeof out !== 'object') {
    fail('(result)', `returned ${String(out)} instead of a TextStep.`);
  }
  if (typeof out.observation !== 'string') {
    fail('observation', `observation is ${typeof out.observation}, expected a string.`);
  }
  if (typeof out.reward !== 'number' || !Number.isFinite(out.reward)) {
    fail(
      'reward',
      `reward is ${typeof out.reward === 'number' ? String(out.reward) : `${typeof out.reward} ${JSON.stringify(out.reward)}`}; rewards must be finite numbers.`,
    );
  }
  for (const flag of ['terminated', 'truncated'] as const) {
    if (typeof out[flag] !== 'boolean') {
      fail(flag, `${flag} is ${JSON.stringify(out[flag]) ?? 'undefined'}, expected true or false.`);
    }
  }
  if (out.info === null || typeof out.info !== 'object') {
    fail('info', `info is ${String(out.info)}, expected an object.`);
  }
  const labels = out.actions;
  const open = labels === null;
  const done = out.terminated || out.truncated;
  if (labels !== null) {
    if (!Array.isArray(labels)) {
      fail('actions', `actions is ${typeof labels}, expected an array of labels or null.`);
    }
    if (labels.length === 0 && !done) {
      fail('actions', 'the label list is empty while the episode runs; offer at least one action.');
    }
    const bad = labels.findIndex((a) => typeof a !== 'string' || a.length === 0);
    if (bad >= 0) {
      fail(
        'actions',
        `label ${bad} is ${JSON.stringify(labels[bad])}, expected a non-empty string.`,
      );
    }
  }
  const finalEmptyList = done && labels !== null && labels.length === 0;
  if (wasOpen !== null && wasOpen !== open && !finalEmptyList) {
    fail(
      'actions',
      wasOpen
        ? 'actions turned from null (open action space) into a label list mid-episode.'
        : 'actions turned from a label list into null (open action space) mid-episode.',
    );
  }
  return open;
}
