import { softBad } from '@poad/bellman';
import { type RolloutBuffer, rolloutSegments } from '@poad/ppo';

/**
 * Soft-BAD critic targets for every token of a rollout (aligned with the buffer's action ids),
 * from the soft values the rollout recorded (`buffer.values`: E_π[Q̄] − β·KL(π ‖ π̄) at each
 * token position, under the target critic). Segments are cut as for advantages: a truncated,
 * non-terminated step bootstraps from its final observation's soft value (unless
 * `truncationAsTermination`), the rollout's last step from the next observation's.
 */
export function softBadTargets(
  buffer: RolloutBuffer,
  o: { gamma: number; truncationAsTermination: boolean },
): Float64Array {
  const out = new Float64Array(buffer.tokenCount);
  for (let n = 0; n < buffer.numEnvs; n++) {
    for (const seg of rolloutSegments(buffer, n, o.truncationAsTermination)) {
      const values: number[] = [];
      for (const i of seg.steps)
        for (let k = buffer.actionOffsets[i]!; k < buffer.actionOffsets[i + 1]!; k++)
          values.push(buffer.values[k]!);
      const y = softBad(
        {
          rewards: seg.steps.map((i) => buffer.rewards[i]!),
          dones: seg.steps.map(
            (i) =>
              buffer.terminated[i] === 1 ||
              (o.truncationAsTermination && buffer.truncated[i] === 1),
          ),
          tokenCounts: seg.steps.map((i) => buffer.actionLength(i)),
          values,
          bootstrapValue: seg.bootstrapValue,
        },
        { gamma: o.gamma },
      );
      // The steps of one environment are not adjacent in the buffer (sample index t·N + n).
      let j = 0;
      for (const i of seg.steps)
        for (let k = buffer.actionOffsets[i]!; k < buffer.actionOffsets[i + 1]!; k++)
          out[k] = y[j++]!;
    }
  }
  return out;
}
