import * as tf from '@tensorflow/tfjs-core';
import {
  type Backend,
  type KernelArgs,
  registerWebGpuKernelTable,
  unpackInto,
} from './multi-tensor.js';
import { elementwise, type GpuProgram, perRow } from './programs.js';

/*
 * PPO's token-level policy loss in two GPU programs instead of some sixty small TF.js kernels:
 * one forward program reduces the masked sums a minibatch logs (clipped surrogate, entropy,
 * approximate KL, clip fraction) in one workgroup; its gradient is one elementwise program for
 * the new log-probs and one for the entropies. `@poad/ppo` calls the kernel by name
 * (`PPO_LOSS_KERNELS`) where the active backend has it and composes the same math from TF.js ops
 * elsewhere, so CPU backends compute what they always did.
 */

/** Names of the fused PPO loss kernels registered for the webgpu backend. */
export const PPO_LOSS_KERNELS = {
  /**
   * `{ lpNew, lpOld, adv, ent, mask }` (one shape, float32) with the attribute `clip` → four
   * scalars, the sums over the entries where mask ≠ 0 (others count as 0 whatever they hold) of:
   * max(−ρ·Â, −clip(ρ, 1 ± ε)·Â) with ρ = exp(lpNew − lpOld); ent; (ρ − 1) − log ρ; 1 where
   * |ρ − 1| > ε. NaN in all four when an entry counted is not finite. Differentiable in lpNew
   * (through the first and third sums) and ent (through the second).
   */
  tokenLoss: 'PoadPpoTokenLoss',
  tokenLossGradLogProbs: 'PoadPpoTokenLossGradLogProbs',
  tokenLossGradEntropy: 'PoadPpoTokenLossGradEntropy',
} as const;

/** True when the bits of `x` are not those of a finite float (NaN or ±∞). */
const notFinite = (x: string) => `((bitcast<u32>(${x}) & 0x7f800000u) == 0x7f800000u)`;

function tokenLossProgram(n: number): GpuProgram {
  return perRow(
    'poad_ppo_token_loss',
    ['lpNew', 'lpOld', 'adv', 'ent', 'mask'],
    [4],
    1,
    n,
    `
        var pg = 0.0;
        var en = 0.0;
        var kl = 0.0;
        var cl = 0.0;
        var bad = 0;
        for (var i = lane; i < cols; i = i + WG) {
          if (mask[i] != 0.0) {
            let x = lpNew[i] - lpOld[i];
            let ratio = exp(x);
            let a = adv[i];
            let u = -ratio * a;
            let c = -clamp(ratio, 1.0 - uniforms.clip, 1.0 + uniforms.clip) * a;
            let e = ent[i];
            if (${notFinite('x')} || ${notFinite('ratio')} || ${notFinite('u')} || ${notFinite('c')} || ${notFinite('e')}) {
              bad = 1;
            } else {
              pg = pg + max(u, c);
              en = en + e;
              kl = kl + ((ratio - 1.0) - x);
              cl = cl + select(0.0, 1.0, abs(ratio - 1.0) > uniforms.clip);
            }
          }
        }
        let sPg = reduceSum(pg);
        let sEn = reduceSum(en);
        let sKl = reduceSum(kl);
        let sCl = reduceSum(cl);
        let anyBad = reduceSum(f32(bad));
        if (lane == 0) {
          if (anyBad > 0.0) {
            // A quiet NaN from bits held in a variable (a constant NaN does not compile).
            var nanBits = 0x7fc00000u;
            let nan = bitcast<f32>(nanBits);
            result[0] = nan;
            result[1] = nan;
            result[2] = nan;
            result[3] = nan;
          } else {
            result[0] = sPg;
            result[1] = sEn;
            result[2] = sKl;
            result[3] = sCl;
          }
        }`,
    'clip : f32,',
  );
}

/**
 * d/d lpNew of dPg·Σ surrogate + dKl·Σ KL, as TF.js differentiates the composition: the max
 * sends the gradient to the unclipped term where it is ≥ the clipped one, else to the clipped
 * term, which passes it only where ρ lies in [1 − ε, 1 + ε]; d ratio = ρ; d KL = ρ − 1. Zero
 * where the mask is 0.
 */
function gradLogProbsProgram(shape: number[]): GpuProgram {
  return elementwise(
    'poad_ppo_token_loss_grad_lp',
    ['lpNew', 'lpOld', 'adv', 'mask', 'dPg', 'dKl'],
    shape,
    `
          if (mask[index] == 0.0) {
            result[index] = 0.0;
            return;
          }
          let ratio = exp(lpNew[index] - lpOld[index]);
          let a = adv[index];
          let lo = 1.0 - uniforms.clip;
          let hi = 1.0 + uniforms.clip;
          let u = -ratio * a;
          let c = -clamp(ratio, lo, hi) * a;
          var dRatio = 0.0;
          if (u >= c) {
            dRatio = -a * dPg[0];
          } else if (ratio >= lo && ratio <= hi) {
            dRatio = -a * dPg[0];
          }
          result[index] = dRatio * ratio + dKl[0] * (ratio - 1.0);`,
    'clip : f32,',
  );
}

/** d/d ent of dEnt·Σ ent: dEnt where the mask is not 0, else 0. */
function gradEntropyProgram(shape: number[]): GpuProgram {
  return elementwise(
    'poad_ppo_token_loss_grad_ent',
    ['mask', 'dEnt'],
    shape,
    'result[index] = select(0.0, dEnt[0], mask[index] != 0.0);',
  );
}

const sizeOf = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

const KERNELS: Record<string, (args: KernelArgs) => tf.TensorInfo | tf.TensorInfo[]> = {
  [PPO_LOSS_KERNELS.tokenLoss]: ({ inputs, backend, attrs }) => {
    const { lpNew, lpOld, adv, ent, mask } = inputs as Record<string, tf.TensorInfo>;
    const xs = [lpNew!, lpOld!, adv!, ent!, mask!];
    const n = sizeOf(lpNew!.shape);
    for (const [i, x] of xs.entries()) {
      if (x.dtype !== 'float32' || sizeOf(x.shape) !== n) {
        throw new RangeError(
          `${PPO_LOSS_KERNELS.tokenLoss}: input ${i} is ${x.dtype} [${x.shape}]; every input must be float32 with ${n} values`,
        );
      }
    }
    const b = backend as Backend;
    const sums = b.runWebGPUProgram(tokenLossProgram(n), xs, 'float32', [
      { type: 'int32', data: [1] },
      { type: 'int32', data: [n] },
      { type: 'float32', data: [(attrs as { clip: number }).clip] },
    ]);
    const out = unpackInto(b, sums, [[], [], [], []]);
    b.disposeData(sums.dataId);
    return out;
  },
  [PPO_LOSS_KERNELS.tokenLossGradLogProbs]: ({ inputs, backend, attrs }) => {
    const { lpNew, lpOld, adv, mask, dPg, dKl } = inputs as Record<string, tf.TensorInfo>;
    return (backend as Backend).runWebGPUProgram(
      gradLogProbsProgram([...lpNew!.shape]),
      [lpNew!, lpOld!, adv!, mask!, dPg!, dKl!],
      'float32',
      [{ type: 'float32', data: [(attrs as { clip: number }).clip] }],
    );
  },
  [PPO_LOSS_KERNELS.tokenLossGradEntropy]: ({ inputs, backend }) => {
    const { mask, dEnt } = inputs as Record<string, tf.TensorInfo>;
    return (backend as Backend).runWebGPUProgram(
      gradEntropyProgram([...mask!.shape]),
      [mask!, dEnt!],
      'float32',
    );
  },
};

/** Registers the fused PPO loss kernels and their gradient for the webgpu backend (idempotent). */
export function registerPpoLossKernels(): void {
  registerWebGpuKernelTable(KERNELS);
  if (tf.getGradient(PPO_LOSS_KERNELS.tokenLoss)) return;
  tf.registerGradient({
    kernelName: PPO_LOSS_KERNELS.tokenLoss,
    inputsToSave: ['lpNew', 'lpOld', 'adv', 'mask'],
    gradFunc: (dy, saved, attrs) => {
      // An output that no loss uses has no gradient (TF.js passes null): it counts as 0.
      const [dPg, dEnt, dKl] = (dy as (tf.Tensor | null)[]).map((d) => d ?? tf.zeros([]));
      const [lpNew, lpOld, adv, mask] = saved as tf.Tensor[];
      const run = (name: string, inputs: Record<string, tf.Tensor>, a: tf.NamedAttrMap = {}) =>
        tf.engine().runKernel(name, inputs as tf.NamedTensorMap, a) as tf.Tensor;
      return {
        lpNew: () =>
          run(
            PPO_LOSS_KERNELS.tokenLossGradLogProbs,
            { lpNew: lpNew!, lpOld: lpOld!, adv: adv!, mask: mask!, dPg: dPg!, dKl: dKl! },
            { clip: (attrs as { clip: number }).clip },
          ),
        ent: () => run(PPO_LOSS_KERNELS.tokenLossGradEntropy, { mask: mask!, dEnt: dEnt! }),
      };
    },
  });
}
