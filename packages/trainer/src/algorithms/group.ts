import {
  type GroupConfig,
  type GroupIterationReport,
  GroupTrainer,
  groupConfigSchema,
} from '@poad/grpo';
import { GroupLmPolicy } from '../policy/group-lm-policy.js';
import { reportOf } from '../run-trainer.js';
import type { AlgorithmEntry, AlgorithmTrainer } from './types.js';

/** The config fields of a group algorithm's flags: all of `GroupConfig` but `estimator`, which `--algo` picks. */
const { estimator: _picked, ...fields } = groupConfigSchema;

/**
 * The critic-free, group-relative family of `@poad/grpo` (group rollouts → group-relative
 * advantages from `@poad/bellman` → clipped update without a critic), one entry per estimator:
 * its config is `GroupConfig` with `estimator` fixed to the entry's name; its policy is the LoRA
 * actor without a value head (`GroupLmPolicy`, whose reference is the base model); it runs
 * `groups` × `groupSize` environments.
 */
function groupAlgorithm(
  name: GroupConfig['estimator'],
  summary: string,
): AlgorithmEntry<GroupConfig, GroupIterationReport> & { name: typeof name } {
  return {
    name,
    summary,
    configSchema: fields,
    fixed: { estimator: name },
    needs: { seededResets: true },
    valueHead: false,
    episodicIterations: true,
    runOptions: (config) => ({ envs: config.groups * config.groupSize }),
    createPolicy: (model, tokenizer, _config, o) => ({
      policy: new GroupLmPolicy(model, tokenizer, o.stopTokenIds),
      adapters: {},
    }),
    // Its policy is the GroupLmPolicy createPolicy builds; a VecEnv resets groups from seeds.
    Trainer: GroupTrainer as unknown as AlgorithmTrainer<GroupConfig, GroupIterationReport>,
    report(r) {
      // Every token of an action takes its step's group-relative advantage.
      const b = r.buffer;
      const perToken = new Float64Array(b.tokenCount);
      for (let i = 0; i < b.size; i++)
        perToken.fill(r.advantages.perSample[i]!, b.actionOffsets[i]!, b.actionOffsets[i + 1]!);
      const spread = r.advantages.spread;
      return reportOf(
        r,
        {
          ...r.update,
          valueLoss: Number.NaN,
          explainedVariance: Number.NaN,
          criticGradNorm: Number.NaN,
          skippedMinibatches: 0,
          extra: {
            groupReturnSpread: spread.reduce((a, x) => a + x, 0) / Math.max(1, spread.length),
            zeroSpreadGroups: r.advantages.zeroSpreadShare,
          },
        },
        { level: 'token', values: perToken, name: 'group-relative advantages' },
      );
    },
    settingsOf(config) {
      const { estimator: _name, normalise, omega, gamma, ...rest } = config;
      // Only GiGPO has a step level (ω, γ); RLOO has no std to divide by.
      return {
        ...rest,
        ...(name === 'rloo' ? {} : { normalise }),
        ...(name === 'gigpo' ? { omega, gamma } : {}),
      };
    },
  };
}

/** GRPO: an episode's return minus its group's mean, over the group's std (`--normalise none`: Dr. GRPO). */
export const grpo = groupAlgorithm(
  'grpo',
  "GRPO: critic-free; each episode's return against its group of episodes from the same start (--groups, --group-size, --normalise)",
);
/** RLOO: an episode's return minus the mean of its group's other episodes. */
export const rloo = groupAlgorithm(
  'rloo',
  "RLOO: critic-free; each episode's return minus the mean of its group's other episodes",
);
/** GiGPO: GRPO's episode advantage plus ω times a step advantage over equal states. */
export const gigpo = groupAlgorithm(
  'gigpo',
  "GiGPO: GRPO plus ω times a step advantage over the group's steps from equal states (--omega)",
);
