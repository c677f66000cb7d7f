// PPO's token-level policy loss on webgpu as one fused program (the kernel @poad/tfjs-kernels
// registers, which @poad/ppo calls by name) against the composition of @poad/ppo's loss functions
// on the same backend: the four masked sums and the gradients in the new log-probs and the
// entropies, with clipped and unclipped ratios, both signs of advantage and masked entries that
// hold NaN and ∞. Runs where Dawn finds an adapter (lavapipe will do); under CI it must find one.
// Gradient functions are registered by whoever loads TF.js (the app); the test does it here.
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { expectGpuUnderCi, startWebGpuForTests } from '@poad/dev-kit';
import {
  approxKl,
  clipIndicator,
  fusedTokenLoss,
  maskedSum,
  PPO_TOKEN_LOSS_KERNEL,
  policyLoss,
  SeededRng,
} from '@poad/ppo';
import {
  gpuCounters,
  gpuCountersSince,
  initBackend,
  PPO_LOSS_KERNELS,
  releaseBackend,
} from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';

const gpu = await startWebGpuForTests(initBackend, releaseBackend);

const [B, L, CLIP] = [5, 7, 0.2];

/** A seeded stream in [-1, 1). */
function stream(seed: number): () => number {
  const rng = new SeededRng(seed);
  return () => 2 * rng.float() - 1;
}

function inputs(seed: number) {
  const r = stream(seed);
  const n = B * L;
  const mask = Float32Array.from({ length: n }, (_, i) =>
    i % L < 2 + (Math.floor(i / L) % 5) ? 1 : 0,
  );
  const lpOld = Float32Array.from({ length: n }, () => -1.5 + r());
  // Ratios from e^-0.6 to e^0.6: inside and outside [0.8, 1.2] on both sides.
  const lpNew = Float32Array.from(lpOld, (x) => x + 0.6 * r());
  const adv = Float32Array.from({ length: n }, () => 2 * r());
  const ent = Float32Array.from({ length: n }, () => 1.2 + r());
  // Padding holds garbage: it must not reach a sum or a gradient.
  mask.forEach((m, i) => {
    if (m === 0) {
      lpNew[i] = i % 2 ? Number.NaN : Number.POSITIVE_INFINITY;
      ent[i] = Number.NaN;
    }
  });
  return { mask, lpOld, lpNew, adv, ent };
}

/** The four sums and the gradients of pg + 0.3·entropy + 0.7·KL, fused or composed. */
async function lossAndGrads(fused: boolean, seed: number) {
  const x = inputs(seed);
  const t = (a: Float32Array) => tf.tensor2d(a, [B, L]);
  const [mask, lpOld, adv] = [t(x.mask), t(x.lpOld), t(x.adv)];
  const sums = (lpNew: tf.Tensor, ent: tf.Tensor): tf.Tensor[] => {
    if (fused) {
      return tf
        .engine()
        .runKernel(
          PPO_TOKEN_LOSS_KERNEL,
          { lpNew, lpOld, adv, ent, mask } as unknown as tf.NamedTensorMap,
          { clip: CLIP },
        ) as tf.Tensor[];
    }
    const mb = tf.cast(mask, 'bool');
    const lp = tf.where(mb, lpNew, tf.zerosLike(lpNew));
    const e = tf.where(mb, ent, tf.zerosLike(ent));
    return [
      maskedSum(policyLoss(lp, lpOld, adv, CLIP), mask),
      maskedSum(e, mask),
      maskedSum(approxKl(lp, lpOld), mask),
      maskedSum(clipIndicator(lp, lpOld, CLIP), mask),
    ];
  };
  const [lpNewT, entT] = [t(x.lpNew), t(x.ent)];
  const values = await Promise.all(
    tf
      .tidy(() => sums(lpNewT, entT))
      .map(async (s) => {
        const v = (await s.data())[0]!;
        s.dispose();
        return v;
      }),
  );
  const lpVar = tf.variable(lpNewT, true, `lp${seed}${fused}`);
  const entVar = tf.variable(entT, true, `ent${seed}${fused}`);
  const { value, grads: g } = tf.variableGrads(() => {
    const [pg, es, kl] = sums(lpVar, entVar);
    return tf.add(tf.add(pg!, tf.mul(es!, 0.3)), tf.mul(kl!, 0.7)) as tf.Scalar;
  }, [lpVar, entVar]);
  const grads = await Promise.all([g[lpVar.name]!.data(), g[entVar.name]!.data()]);
  tf.dispose([value, ...Object.values(g), lpVar, entVar, mask, lpOld, adv, lpNewT, entT]);
  return { values, grads: grads.map((d) => Array.from(d)) };
}

describe('the fused PPO token loss on webgpu', () => {
  it('runs where CI provides a software Vulkan (no silent skip)', () => {
    expectGpuUnderCi(gpu, 'fused PPO loss tests');
  });

  it.runIf(gpu.ok)('equals the composition: the four sums and both gradients', async () => {
    expect(fusedTokenLoss()).toBe(true);
    expect(PPO_LOSS_KERNELS.tokenLoss).toBe(PPO_TOKEN_LOSS_KERNEL);
    for (const seed of [1, 2, 3]) {
      const live = tf.memory().numTensors;
      const fused = await lossAndGrads(true, seed);
      const composed = await lossAndGrads(false, seed);
      expect(tf.memory().numTensors).toBe(live);
      fused.values.forEach((v, i) => {
        expect(
          Math.abs(v - composed.values[i]!),
          `sum ${i}: ${v} vs ${composed.values[i]}`,
        ).toBeLessThan(1e-5 * Math.max(1, Math.abs(v)));
      });
      // Some ratios were clipped and some not, so both branches of the surrogate were taken.
      expect(composed.values[3]).toBeGreaterThan(0);
      expect(composed.values[3]).toBeLessThan(B * L);
      fused.grads.forEach((g, k) => {
        g.forEach((v, i) => {
          expect(Math.abs(v - composed.grads[k]![i]!), `gradient ${k}[${i}]`).toBeLessThan(1e-6);
        });
      });
      expect(fused.grads[0]!.some((v) => v !== 0)).toBe(true);
    }
  });

  it.runIf(gpu.ok)(
    'gives NaN sums when an entry counted is not finite, and takes one program',
    async () => {
      const x = inputs(4);
      x.lpNew[0] = Number.NaN; // entry 0 is counted (mask 1)
      expect(x.mask[0]).toBe(1);
      const t = (a: Float32Array) => tf.tensor2d(a, [B, L]);
      const ins = {
        lpNew: t(x.lpNew),
        lpOld: t(x.lpOld),
        adv: t(x.adv),
        ent: t(x.ent),
        mask: t(x.mask),
      };
      const before = gpuCounters()!;
      const out = tf
        .engine()
        .runKernel(PPO_TOKEN_LOSS_KERNEL, ins as unknown as tf.NamedTensorMap, {
          clip: CLIP,
        }) as tf.Tensor[];
      const work = gpuCountersSince(before, gpuCounters()!);
      expect(work.programs).toBe(1);
      const v = await Promise.all(out.map(async (s) => (await s.data())[0]));
      expect(v.every((y) => Number.isNaN(y))).toBe(true);
      tf.dispose([...out, ...Object.values(ins)]);
    },
  );
});
