/**
 * The webgpu backend: its start, the package's WGSL fused ops against TF.js compositions (values
 * and gradients), the bounded AddN and the error guard on reads. Runs where Dawn finds an adapter
 * (a software one such as lavapipe will do); under CI (which installs lavapipe) it must find one,
 * so a missing adapter fails instead of skipping.
 */
import { webGpuTestFile } from '@poad/dev-kit';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it, vi } from 'vitest';
import {
  activeFusedOps,
  GpuDeviceError,
  gpuCounters,
  gpuCountersSince,
  initBackend,
  logProbStats,
  packedGather,
  packedMatMul,
  packWeight,
  randomPackedNormal,
  releaseBackend,
  setFusedOps,
  setSubgroupUse,
  subgroupSize,
  tiledMatMul,
  unpackWeight,
  webGpuFusedOps,
} from '../src/index.js';
import { maxAbsDiff } from './helpers.js';

// A software adapter compiles every shader on first use: seconds per test.
vi.setConfig({ testTimeout: 120_000 });

const gpu = await webGpuTestFile('webgpu tests', { initBackend, releaseBackend }, (info) => {
  expect(info.backend).toBe('webgpu');
  expect(tf.getBackend()).toBe('webgpu');
  expect(info.adapter?.limits.maxStorageBufferBindingSize).toBeGreaterThan(0);
  expect(info.description).toMatch(/^webgpu on /);
});

/** Relative-to-scale max difference (scale at least 1). */
function close(a: ArrayLike<number>, b: ArrayLike<number>, tol: number, what: string): void {
  let scale = 1;
  for (let i = 0; i < a.length; i++) scale = Math.max(scale, Math.abs(a[i] as number));
  expect(maxAbsDiff(a, b) / scale, what).toBeLessThan(tol);
}

// TF.js compositions of the fused ops (autodiff through the registered gradients).
function rmsNormRef(x: tf.Tensor2D, w: tf.Tensor1D, eps: number): tf.Tensor2D {
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(tf.mean(tf.square(x), -1, true), eps))), w);
}

function swiGluRef(gate: tf.Tensor2D, up: tf.Tensor2D): tf.Tensor2D {
  return tf.mul(tf.mul(gate, tf.sigmoid(gate)), up);
}

/** Rotate-half rotary embedding: [x1, x2] → [x1·cos − x2·sin, x2·cos + x1·sin] per head. */
function rotaryRef(x: tf.Tensor2D, cos: tf.Tensor2D, sin: tf.Tensor2D, heads: number): tf.Tensor2D {
  const [rows, half] = cos.shape;
  const x3 = tf.reshape(x, [rows, heads, 2 * half]);
  const [x1, x2] = tf.split(x3, 2, 2) as [tf.Tensor3D, tf.Tensor3D];
  const c = tf.reshape(cos, [rows, 1, half]);
  const s = tf.reshape(sin, [rows, 1, half]);
  const y = tf.concat(
    [tf.sub(tf.mul(x1, c), tf.mul(x2, s)), tf.add(tf.mul(x2, c), tf.mul(x1, s))],
    2,
  );
  return tf.reshape(y, [rows, heads * 2 * half]);
}

/**
 * Grouped-query attention as TF.js ops: q [b·s, h·hd], k/v [b·s, kv·hd], additive mask [b, s, s],
 * query head h reading kv head floor(h / (h/kv)).
 */
function attentionRef(
  q: tf.Tensor2D,
  k: tf.Tensor2D,
  v: tf.Tensor2D,
  mask: tf.Tensor3D,
  batch: number,
  heads: number,
  kvHeads: number,
): tf.Tensor2D {
  const [rows, width] = q.shape;
  const seq = rows / batch;
  const hd = width / heads;
  const g = heads / kvHeads;
  const q4 = tf.transpose(tf.reshape(q, [batch, seq, heads, hd]), [0, 2, 1, 3]);
  const rep = (t: tf.Tensor2D) => {
    const t4 = tf.transpose(tf.reshape(t, [batch, seq, kvHeads, hd]), [0, 2, 1, 3]);
    const kvOf = Int32Array.from({ length: heads }, (_, h) => Math.floor(h / g));
    return tf.gather(t4, kvOf, 1);
  };
  const scores = tf.add(
    tf.mul(tf.matMul(q4, rep(k), false, true), 1 / Math.sqrt(hd)),
    tf.expandDims(mask, 1),
  );
  const ctx = tf.matMul(tf.softmax(scores), rep(v));
  return tf.reshape(tf.transpose(ctx, [0, 2, 1, 3]), [rows, width]);
}

/** Causal mask [batch, seq, seq]; row b also hides keys at or after `valid[b]` (right padding). */
function causalMask(batch: number, seq: number, valid: number[]): tf.Tensor3D {
  const m = new Float32Array(batch * seq * seq);
  for (let b = 0; b < batch; b++) {
    for (let i = 0; i < seq; i++) {
      for (let j = 0; j < seq; j++) {
        if (j > i || (j >= (valid[b] ?? seq) && j !== i)) m[(b * seq + i) * seq + j] = -1e9;
      }
    }
  }
  return tf.tensor3d(m, [batch, seq, seq]);
}

/** Values and input gradients of `f` under upstream gradient `dy`. */
async function valueAndGrads(
  f: (...xs: tf.Tensor[]) => tf.Tensor,
  xs: tf.Tensor[],
  dySeed: number,
): Promise<Float32Array[]> {
  const y = tf.tidy(() => f(...xs));
  const dy = tf.tidy(() => tf.randomNormal(y.shape, 0, 1, 'float32', dySeed));
  const grads = tf.grads((...a: tf.Tensor[]) => f(...a))(xs, dy);
  const out = [await y.data(), ...(await Promise.all(grads.map((g) => g.data())))];
  tf.dispose([y, dy, ...grads]);
  return out as Float32Array[];
}

/** The WGSL op `fused` against the composition `plain`, on webgpu, with no tensor left over. */
async function compare(
  fused: (...xs: tf.Tensor[]) => tf.Tensor,
  plain: (...xs: tf.Tensor[]) => tf.Tensor,
  xs: tf.Tensor[],
): Promise<void> {
  await initBackend('webgpu', { allowSoftwareAdapter: true });
  const before = tf.memory().numTensors;
  const a = await valueAndGrads(fused, xs, 3);
  const b = await valueAndGrads(plain, xs, 3);
  expect(a.length).toBe(b.length);
  a.forEach((v, i) => {
    close(v, b[i] as Float32Array, 2e-5, `output ${i}`);
  });
  expect(tf.memory().numTensors).toBe(before);
}

const rnd = (shape: number[], seed: number, mean = 0) =>
  tf.randomNormal(shape, mean, 1, 'float32', seed);

describe.runIf(gpu.ok)('webgpu fused ops = TF.js compositions', () => {
  it('RMSNorm, values and gradients (rows and widths that do not fill a workgroup)', async () => {
    for (const [rows, cols] of [
      [5, 37],
      [3, 300],
    ] as const) {
      const x = rnd([rows, cols], 1);
      const w = rnd([cols], 2, 1);
      await compare(
        (a, b) => webGpuFusedOps.rmsNorm(a as tf.Tensor2D, b as tf.Tensor1D, 1e-5),
        (a, b) => rmsNormRef(a as tf.Tensor2D, b as tf.Tensor1D, 1e-5),
        [x, w],
      );
      tf.dispose([x, w]);
    }
  });

  it('SwiGLU, values and gradients', async () => {
    const g = rnd([7, 33], 4);
    const u = rnd([7, 33], 5);
    await compare(
      (a, b) => webGpuFusedOps.swiGlu(a as tf.Tensor2D, b as tf.Tensor2D),
      (a, b) => swiGluRef(a as tf.Tensor2D, b as tf.Tensor2D),
      [g, u],
    );
    tf.dispose([g, u]);
  });

  it('SwiGLU of a joined gate|up tensor, values and gradient', async () => {
    const gu = rnd([7, 66], 14);
    const joined = webGpuFusedOps.swiGluJoined;
    if (!joined) throw new Error('the webgpu fused ops lack swiGluJoined');
    await compare(
      (a) => joined(a as tf.Tensor2D),
      (a) => {
        const [g, u] = tf.split(a as tf.Tensor2D, 2, 1) as [tf.Tensor2D, tf.Tensor2D];
        return swiGluRef(g, u);
      },
      [gu],
    );
    gu.dispose();
  });

  it('a + s·b, values and gradients', async () => {
    const a = rnd([5, 9], 15);
    const b = rnd([5, 9], 16);
    const addScaled = webGpuFusedOps.addScaled;
    if (!addScaled) throw new Error('the webgpu fused ops lack addScaled');
    await compare(
      (x, y) => addScaled(x as tf.Tensor2D, y as tf.Tensor2D, 0.375),
      (x, y) => tf.add(x!, tf.mul(y!, 0.375)),
      [a, b],
    );
    tf.dispose([a, b]);
  });

  it('rotary embedding, values and input gradient', async () => {
    const rows = 6;
    const heads = 3;
    const half = 4;
    const x = rnd([rows, heads * 2 * half], 6);
    const angles = tf.tidy(() => tf.mul(rnd([rows, half], 7), 3));
    const cos = tf.cos(angles) as tf.Tensor2D;
    const sin = tf.sin(angles) as tf.Tensor2D;
    await compare(
      (a) => webGpuFusedOps.rotaryEmbedding(a as tf.Tensor2D, cos, sin, heads),
      (a) => rotaryRef(a as tf.Tensor2D, cos, sin, heads),
      [x],
    );
    tf.dispose([x, angles, cos, sin]);
  });

  it('q|k|v cut, LoRA updates and rotations in one program: values and gradients', async () => {
    const split = webGpuFusedOps.splitQkv;
    if (!split) throw new Error('the webgpu fused ops lack splitQkv');
    const [rows, heads, kvHeads, half, scale] = [7, 4, 2, 4, 1.75];
    const widths = { q: heads * 2 * half, k: kvHeads * 2 * half, v: kvHeads * 2 * half };
    const y = rnd([rows, widths.q + widths.k + widths.v], 51);
    const angles = tf.tidy(() => tf.mul(rnd([rows, half], 52), 3));
    const cos = tf.cos(angles) as tf.Tensor2D;
    const sin = tf.sin(angles) as tf.Tensor2D;
    const lows = {
      q: rnd([rows, widths.q], 53),
      k: rnd([rows, widths.k], 54),
      v: rnd([rows, widths.v], 55),
    };
    // The composition the decoder runs without the op: slices, scaled additions, two rotations.
    const plain = (yy: tf.Tensor, l: Partial<Record<'q' | 'k' | 'v', tf.Tensor>>) => {
      const [q, k, v] = tf.split(yy, [widths.q, widths.k, widths.v], 1) as tf.Tensor2D[];
      const add = (p: tf.Tensor2D, low?: tf.Tensor) =>
        low ? (tf.add(p, tf.mul(low, scale)) as tf.Tensor2D) : p;
      return tf.concat(
        [
          rotaryRef(add(q!, l.q), cos, sin, heads),
          rotaryRef(add(k!, l.k), cos, sin, kvHeads),
          add(v!, l.v),
        ],
        1,
      );
    };
    const fused = (yy: tf.Tensor, l: Partial<Record<'q' | 'k' | 'v', tf.Tensor2D>>) =>
      tf.concat(split(yy as tf.Tensor2D, l, scale, cos, sin, widths), 1);
    // LoRA on q and v (the default targets), on all three, and on none.
    const sets: ('q' | 'k' | 'v')[][] = [['q', 'v'], ['q', 'k', 'v'], []];
    for (const which of sets) {
      const xs = [y, ...which.map((m) => lows[m])];
      const pick = (a: tf.Tensor[]) => Object.fromEntries(which.map((m, i) => [m, a[i + 1]]));
      await compare(
        (...a) => fused(a[0]!, pick(a) as Partial<Record<'q' | 'k' | 'v', tf.Tensor2D>>),
        (...a) => plain(a[0]!, pick(a)),
        xs,
      );
    }
    const before = gpuCounters()!;
    const out = split(
      y as tf.Tensor2D,
      { q: lows.q as tf.Tensor2D, v: lows.v as tf.Tensor2D },
      scale,
      cos,
      sin,
      widths,
    );
    expect(gpuCountersSince(before, gpuCounters()!).programs).toBe(1);
    expect(out.map((t) => t.shape)).toEqual([
      [rows, widths.q],
      [rows, widths.k],
      [rows, widths.v],
    ]);
    tf.dispose(out);
    expect(() => split(y as tf.Tensor2D, {}, scale, cos, sin, { ...widths, v: 3 })).toThrow(
      /splitQkv: /,
    );
    tf.dispose([y, angles, cos, sin, ...Object.values(lows)]);
  });

  it('flash attention: causal, grouped-query, padded; values and q/k/v gradients', async () => {
    // Shapes that leave workgroups and shared tiles part-filled, several row blocks (seq 70 >
    // 64), a head size of 64 (smaller tiles), and plain multi-head (group 1).
    for (const [batch, seq, heads, kvHeads, hd] of [
      [2, 13, 4, 2, 8],
      [1, 70, 2, 1, 16],
      [2, 9, 3, 3, 64],
    ] as const) {
      const rows = batch * seq;
      const q = tf.tidy(() => tf.mul(rnd([rows, heads * hd], 11), 0.7));
      const k = tf.tidy(() => tf.mul(rnd([rows, kvHeads * hd], 12), 0.7));
      const v = rnd([rows, kvHeads * hd], 13);
      const mask = causalMask(batch, seq, [seq, seq - 3]);
      const opts = { batch, heads, kvHeads };
      const fused = webGpuFusedOps.attention;
      if (!fused) throw new Error('the webgpu fused ops lack attention');
      await compare(
        (a, b, c) => fused(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, mask, opts),
        (a, b, c) =>
          attentionRef(
            a as tf.Tensor2D,
            b as tf.Tensor2D,
            c as tf.Tensor2D,
            mask,
            batch,
            heads,
            kvHeads,
          ),
        [q, k, v],
      );
      tf.dispose([q, k, v, mask]);
    }
  });

  it('flash attention runs one program forward and four backward', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const fused = webGpuFusedOps.attention;
    if (!fused) throw new Error('the webgpu fused ops lack attention');
    const [batch, seq, heads, kvHeads, hd] = [2, 20, 4, 2, 16];
    const q = rnd([batch * seq, heads * hd], 1);
    const k = rnd([batch * seq, kvHeads * hd], 2);
    const v = rnd([batch * seq, kvHeads * hd], 3);
    const mask = causalMask(batch, seq, [seq, seq]);
    const dy = rnd([batch * seq, heads * hd], 4);
    const f = (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
      fused(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, mask, { batch, heads, kvHeads });
    const y = f(q, k, v);
    await y.data();
    const programsOf = (work: () => void): number => {
      const start = gpuCounters();
      if (!start) throw new Error('no GPU counters on webgpu');
      work();
      return gpuCountersSince(start, gpuCounters() ?? start).programs;
    };
    expect(programsOf(() => tf.dispose(f(q, k, v)))).toBe(1);
    // tf.grads runs the forward again: 1 + stats + dq + dk + dv.
    expect(programsOf(() => tf.dispose(tf.grads(f)([q, k, v], dy)))).toBe(1 + 4);
    tf.dispose([q, k, v, mask, dy, y]);
  });

  it("ranged attention over packed rows equals a softmax over each row's key ranges", async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const ranged = webGpuFusedOps.rangeAttention;
    if (!ranged) throw new Error('the webgpu fused ops lack rangeAttention');
    const [rows, heads, kvHeads, hd] = [13, 4, 2, 16];
    const qA = rnd([rows, heads * hd], 41);
    const kA = rnd([rows, kvHeads * hd], 42);
    const vA = rnd([rows, kvHeads * hd], 43);
    // Rows 0-5 a prompt (causal), rows 6-8 and 9-11 two candidates continuing it, row 12 sees
    // nothing (zeros); ranges written as (from, to, from, to).
    const ranges: number[] = [];
    for (let r = 0; r < 6; r++) ranges.push(0, r + 1, 0, 0);
    for (const own of [6, 9]) for (let k = 0; k < 3; k++) ranges.push(0, 6, own, own + k + 1);
    ranges.push(0, 0, 5, 5);
    const rangesT = tf.tensor1d(ranges, 'int32');
    const before = tf.memory().numTensors;
    const got = ranged(qA as tf.Tensor2D, kA as tf.Tensor2D, vA as tf.Tensor2D, rangesT, {
      kvHeads,
    });
    const out = await got.data();
    got.dispose();
    expect(tf.memory().numTensors).toBe(before);
    const [q, k, v] = await Promise.all([qA.data(), kA.data(), vA.data()]);
    const want = new Float32Array(rows * heads * hd);
    for (let r = 0; r < rows; r++) {
      const keys: number[] = [];
      for (let j = ranges[4 * r]!; j < ranges[4 * r + 1]!; j++) keys.push(j);
      for (let j = ranges[4 * r + 2]!; j < ranges[4 * r + 3]!; j++) keys.push(j);
      for (let h = 0; h < heads; h++) {
        const kvh = Math.floor(h / (heads / kvHeads));
        const s = keys.map((j) => {
          let dot = 0;
          for (let c = 0; c < hd; c++)
            dot += q[r * heads * hd + h * hd + c]! * k[j * kvHeads * hd + kvh * hd + c]!;
          return dot / Math.sqrt(hd);
        });
        const m = Math.max(...s);
        const e = s.map((x) => Math.exp(x - m));
        const z = e.reduce((a, b) => a + b, 0);
        for (let c = 0; c < hd; c++) {
          let acc = 0;
          keys.forEach((j, n) => {
            acc += (e[n]! / z) * v[j * kvHeads * hd + kvh * hd + c]!;
          });
          want[r * heads * hd + h * hd + c] = keys.length ? acc : 0;
        }
      }
    }
    close(out, want, 2e-5, 'ranged attention');
    expect(Array.from(out.subarray(12 * heads * hd))).toEqual(new Array(heads * hd).fill(0));
    expect(() =>
      ranged(
        qA as tf.Tensor2D,
        kA as tf.Tensor2D,
        vA as tf.Tensor2D,
        tf.tensor1d([0, 1], 'int32'),
        {
          kvHeads,
        },
      ),
    ).toThrow(/rangeAttention: .*ranges int32 of 4·rows values/);
    tf.dispose([qA, kA, vA, rangesT]);
  });

  it('ranged attention: gradients in q, k and v equal the masked composition, with the inverse ranges', async () => {
    const ranged = webGpuFusedOps.rangeAttention!;
    const [rows, heads, kvHeads, hd] = [12, 4, 2, 16];
    // A prompt (rows 0-5) and two candidates continuing it (6-8, 9-11).
    const ranges: number[] = [];
    const back: number[] = [];
    for (let r = 0; r < 6; r++) ranges.push(0, r + 1, 0, 0);
    for (const own of [6, 9]) for (let k = 0; k < 3; k++) ranges.push(0, 6, own, own + k + 1);
    for (let j = 0; j < 6; j++) back.push(j, 6, 6, 12);
    for (const own of [6, 9]) for (let k = 0; k < 3; k++) back.push(own + k, own + 3, 0, 0);
    const mask = new Float32Array(rows * rows).fill(-1e9);
    for (let r = 0; r < rows; r++) {
      for (const part of [0, 1]) {
        for (let j = ranges[4 * r + 2 * part]!; j < ranges[4 * r + 2 * part + 1]!; j++)
          mask[r * rows + j] = 0;
      }
    }
    const m3 = tf.tensor3d(mask, [1, rows, rows]);
    const rangesT = tf.tensor1d(ranges, 'int32');
    const backT = tf.tensor1d(back, 'int32');
    const q = rnd([rows, heads * hd], 61);
    const k = rnd([rows, kvHeads * hd], 62);
    const v = rnd([rows, kvHeads * hd], 63);
    await compare(
      (a, b, c) =>
        ranged(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, rangesT, {
          kvHeads,
          back: backT,
        }),
      (a, b, c) =>
        attentionRef(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, m3, 1, heads, kvHeads),
      [q, k, v],
    );
    // Without the inverse ranges there is no gradient, and the error says what to pass.
    expect(() =>
      tf.grad((a: tf.Tensor) =>
        ranged(a as tf.Tensor2D, k as tf.Tensor2D, v as tf.Tensor2D, rangesT, { kvHeads }),
      )(q),
    ).toThrow(/pass `back`/);
    tf.dispose([m3, rangesT, backT, q, k, v]);
  });

  it('prefix-shared attention (forward only) equals attention over prefix + own keys', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const prefix = webGpuFusedOps.prefixAttention;
    if (!prefix) throw new Error('the webgpu fused ops lack prefixAttention');
    const [groups, per, seq, pre, heads, kvHeads, hd] = [2, 3, 4, 7, 4, 2, 16];
    const rows = groups * per;
    const q = rnd([rows * seq, heads * hd], 31);
    const kOwn = rnd([rows, kvHeads, seq, hd], 32) as tf.Tensor4D;
    const vOwn = rnd([rows, kvHeads, seq, hd], 33) as tf.Tensor4D;
    const kPre = rnd([groups, kvHeads, pre, hd], 34) as tf.Tensor4D;
    const vPre = rnd([groups, kvHeads, pre, hd], 35) as tf.Tensor4D;
    // Group 1's prefix has 5 valid positions of 7; own keys are causal.
    const keys = pre + seq;
    const m = new Float32Array(rows * seq * keys);
    for (let r = 0; r < rows; r++) {
      const valid = Math.floor(r / per) === 1 ? 5 : pre;
      for (let i = 0; i < seq; i++) {
        for (let j = 0; j < keys; j++) {
          const ok = j < pre ? j < valid : j - pre <= i;
          if (!ok) m[(r * seq + i) * keys + j] = -1e9;
        }
      }
    }
    const mask = tf.tensor(m, [rows, 1, 1, seq, keys]);
    const before = tf.memory().numTensors;
    const got = prefix(q as tf.Tensor2D, kOwn, vOwn, kPre, vPre, mask);
    const want = tf.tidy(() => {
      const groupOf = Int32Array.from({ length: rows }, (_, r) => Math.floor(r / per));
      const kvOf = Int32Array.from({ length: heads }, (_, h) => Math.floor(h / (heads / kvHeads)));
      const full = (p: tf.Tensor4D, o: tf.Tensor4D) =>
        tf.gather(tf.concat([tf.gather(p, groupOf, 0), o], 2), kvOf, 1);
      const q4 = tf.transpose(tf.reshape(q, [rows, seq, heads, hd]), [0, 2, 1, 3]);
      const scores = tf.add(
        tf.mul(tf.matMul(q4, full(kPre, kOwn), false, true), 1 / Math.sqrt(hd)),
        tf.reshape(mask, [rows, 1, seq, keys]),
      );
      const ctx = tf.matMul(tf.softmax(scores), full(vPre, vOwn));
      return tf.reshape(tf.transpose(ctx, [0, 2, 1, 3]), [rows * seq, heads * hd]);
    });
    close(await got.data(), await want.data(), 2e-5, 'prefix attention');
    tf.dispose([got, want]);
    expect(tf.memory().numTensors).toBe(before);
    tf.dispose([q, kOwn, vOwn, kPre, vPre, mask]);
  });

  it('flash attention refuses shapes that do not fit, naming the input', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const fused = webGpuFusedOps.attention;
    if (!fused) throw new Error('the webgpu fused ops lack attention');
    const q = tf.zeros([6, 8]) as tf.Tensor2D;
    const k = tf.zeros([6, 3]) as tf.Tensor2D;
    const mask = tf.zeros([2, 3, 3]) as tf.Tensor3D;
    expect(() => fused(q, k, k, mask, { batch: 2, heads: 2, kvHeads: 1 })).toThrow(
      /k \[6,3\] must be \[6, 4\]/,
    );
    expect(() => fused(q, q, q, mask, { batch: 2, heads: 3, kvHeads: 1 })).toThrow(RangeError);
    tf.dispose([q, k, mask]);
  });

  it('log-prob and entropy of the targets, values and logit gradients', async () => {
    for (const [rows, vocab] of [
      [4, 61],
      [3, 1000],
    ] as const) {
      const z = tf.tidy(() => tf.mul(rnd([rows, vocab], 7), 3));
      const targets = Int32Array.from({ length: rows }, (_, i) => (i * 37) % vocab);
      const f = (a: tf.Tensor) => {
        const s = logProbStats(a as tf.Tensor2D, targets);
        return tf.concat([s.logProbs, tf.mul(s.entropies, 0.5)]);
      };
      // logProbStats itself, with the WGSL op installed and with its own composition.
      await compare(
        f,
        (a) => {
          setFusedOps(null, 'webgpu');
          try {
            return f(a);
          } finally {
            setFusedOps(webGpuFusedOps, 'webgpu');
          }
        },
        [z],
      );
      z.dispose();
    }
  });
});

/**
 * A random [rows, cols] matrix of 16-bit floats: its float32 values (computed from the bits, not
 * by the code under test) and its packed words (value (r, 2c) in the low half of word (r, c)).
 */
function randomHalfMatrix(
  rows: number,
  cols: number,
  dtype: 'bfloat16' | 'float16',
  seed: number,
): { values: Float32Array; packed: Int32Array } {
  let state = seed >>> 0;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state;
  };
  const bits = new Uint16Array(rows * cols);
  const values = new Float32Array(rows * cols);
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  for (let i = 0; i < bits.length; i++) {
    const sign = next() & 1;
    if (dtype === 'bfloat16') {
      // Exponents 2^-8 .. 2^1, any mantissa.
      const exp = 119 + (next() % 10);
      const b = (sign << 15) | (exp << 7) | (next() & 0x7f);
      bits[i] = b;
      u32[0] = b << 16;
      values[i] = f32[0] as number;
    } else {
      // Normal exponents 2^-8 .. 2^1 and, now and then, a subnormal.
      const sub = next() % 16 === 0;
      const exp = sub ? 0 : 7 + (next() % 10);
      const man = next() & 0x3ff;
      bits[i] = (sign << 15) | (exp << 10) | man;
      const mag = sub ? (man / 1024) * 2 ** -14 : (1 + man / 1024) * 2 ** (exp - 15);
      values[i] = sign ? -mag : mag;
    }
  }
  return { values, packed: new Int32Array(bits.buffer) };
}

describe.runIf(gpu.ok)('webgpu packed 16-bit weights', () => {
  for (const dtype of ['bfloat16', 'float16'] as const) {
    it(`${dtype}: unpacking gives the exact values, gathering the exact rows`, async () => {
      await initBackend('webgpu', { allowSoftwareAdapter: true });
      const before = tf.memory().numTensors;
      const { values, packed } = randomHalfMatrix(9, 14, dtype, 5);
      const w = tf.tensor2d(packed, [9, 7], 'int32');
      const un = unpackWeight(w, dtype);
      expect(Array.from(await un.data())).toEqual(Array.from(values));
      const ids = tf.tensor1d([3, 0, 8, 3], 'int32');
      const rows = packedGather(w, ids, dtype);
      const full = tf.tensor2d(values, [9, 14]);
      const ref = tf.gather(full, ids);
      expect(Array.from(await rows.data())).toEqual(Array.from(await ref.data()));
      tf.dispose([w, un, ids, rows, full, ref]);
      expect(tf.memory().numTensors).toBe(before);
    });

    for (const subgroups of [true, false]) {
      it(`${dtype}${subgroups ? ', A tile through subgroup shuffles' : ', A tile in workgroup memory'}: the tiled products x·W and x·Wᵀ equal float32 matmuls, with input gradients`, async () => {
        await initBackend('webgpu', { allowSoftwareAdapter: true });
        setSubgroupUse(subgroups);
        // Under CI, lavapipe offers subgroups (8 lanes, contiguous): the shuffling form must run.
        if (subgroups && process.env.CI) expect(subgroupSize()).toBe(8);
        if (!subgroups) expect(subgroupSize()).toBeNull();
        // 70 rows and 130 columns leave tiles part-filled in both directions.
        const [m, k, n] = [70, 36, 130];
        const { values, packed } = randomHalfMatrix(k, n, dtype, 9);
        const w = tf.tensor2d(packed, [k, n / 2], 'int32');
        const wf = tf.tensor2d(values, [k, n]);
        const x = rnd([m, k], 21);
        await compare(
          (a) => packedMatMul(a as tf.Tensor2D, w, dtype),
          (a) => tf.matMul(a as tf.Tensor2D, wf),
          [x],
        );
        // x [m, n] · Wᵀ with W [k, n] packed along n.
        const xt = rnd([m, n], 22);
        await compare(
          (a) => packedMatMul(a as tf.Tensor2D, w, dtype, true),
          (a) => tf.matMul(a as tf.Tensor2D, wf, false, true),
          [xt],
        );
        // A second shape after the first: the compiled program must not keep the first's tiling.
        const small = randomHalfMatrix(36, 10, dtype, 10);
        const w2 = tf.tensor2d(small.packed, [36, 5], 'int32');
        const w2f = tf.tensor2d(small.values, [36, 10]);
        await compare(
          (a) => packedMatMul(a as tf.Tensor2D, w2, dtype),
          (a) => tf.matMul(a as tf.Tensor2D, w2f),
          [x],
        );
        // Rows a subgroup's lanes load past the end (m = 5: every tile part-filled).
        const x5 = rnd([5, 36], 23);
        await compare(
          (a) => packedMatMul(a as tf.Tensor2D, w2, dtype),
          (a) => tf.matMul(a as tf.Tensor2D, w2f),
          [x5],
        );
        setSubgroupUse(true);
        tf.dispose([w, wf, x, xt, w2, w2f, x5]);
      });
    }
  }

  it('float32 weights: the tiled products equal TF.js matmuls, values and input gradients, with and without subgroups', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const [m, k, n] = [70, 52, 130];
    const w = rnd([k, n], 31);
    const x = rnd([m, k], 32);
    const xt = rnd([m, n], 33);
    for (const subgroups of [true, false]) {
      setSubgroupUse(subgroups);
      await compare(
        (a) => tiledMatMul(a as tf.Tensor2D, w as tf.Tensor2D),
        (a) => tf.matMul(a as tf.Tensor2D, w as tf.Tensor2D),
        [x],
      );
      await compare(
        (a) => tiledMatMul(a as tf.Tensor2D, w as tf.Tensor2D, true),
        (a) => tf.matMul(a as tf.Tensor2D, w as tf.Tensor2D, false, true),
        [xt],
      );
    }
    setSubgroupUse(true);
    expect(() =>
      tiledMatMul(x as tf.Tensor2D, tf.zeros([k, n / 2], 'int32') as tf.Tensor2D),
    ).toThrow(/packedMatMul/);
    expect(() => tiledMatMul(xt as tf.Tensor2D, w as tf.Tensor2D)).toThrow(/has 130 columns/);
    tf.dispose([w, x, xt]);
  });

  it('packing on the device rounds to nearest, ties to even, and unpacks to the rounded values', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const before = tf.memory().numTensors;
    // Halfway cases (ties to even, both ways), values just past them, NaN, ±Inf, and noise.
    const special = [
      1 + 2 ** -8, // bf16 tie: rounds down to 1 (even)
      1 + 3 * 2 ** -8, // bf16 tie: rounds up to 1 + 2^-6
      1 + 2 ** -8 + 2 ** -20,
      -(1 + 2 ** -8),
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      0,
      -0,
    ];
    const values = Float32Array.from({ length: 64 }, (_, i) =>
      i < special.length ? (special[i] as number) : Math.sin(i * 12.9898) * 3,
    );
    const x = tf.tensor2d(values, [8, 8]);
    const bf = packWeight(x, 'bfloat16');
    const bits = new Uint16Array(new Int32Array(await bf.data()).buffer);
    const f32 = new Float32Array(1);
    const u32 = new Uint32Array(f32.buffer);
    for (let i = 0; i < values.length; i++) {
      f32[0] = values[i] as number;
      const b = u32[0] as number;
      const want = (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
      expect(bits[i], `value ${values[i]}`).toBe(want & 0xffff);
    }
    expect(bits[0]).toBe(0x3f80);
    expect(bits[1]).toBe(0x3f82);
    // float16: every value within half a float16 step of the original after unpacking.
    const h = packWeight(x, 'float16');
    const hBack = unpackWeight(h, 'float16');
    const back = await hBack.data();
    for (let i = 0; i < values.length; i++) {
      const v = values[i] as number;
      if (!Number.isFinite(v)) expect(back[i]).toBe(v);
      else
        expect(Math.abs((back[i] as number) - v)).toBeLessThanOrEqual(
          Math.abs(v) * 2 ** -11 + 1e-7,
        );
    }
    const nanIn = tf.tensor2d([Number.NaN, 1], [1, 2]);
    const nan = packWeight(nanIn, 'bfloat16');
    const nanBack = unpackWeight(nan, 'bfloat16');
    expect(Number.isNaN((await nanBack.data())[0])).toBe(true);
    tf.dispose([x, bf, h, hBack, nanIn, nan, nanBack]);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('random packed normals: one program, the asked-for distribution, a function of the seed', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const start = gpuCounters();
    if (!start) throw new Error('no GPU counters on webgpu');
    const a = randomPackedNormal(256, 256, 'bfloat16', { seed: 7, std: 0.5, mean: 1 });
    expect(gpuCountersSince(start, gpuCounters() ?? start).programs).toBe(1);
    const b = randomPackedNormal(256, 256, 'bfloat16', { seed: 7, std: 0.5, mean: 1 });
    const c = randomPackedNormal(256, 256, 'bfloat16', { seed: 8, std: 0.5, mean: 1 });
    expect(Array.from(await b.data())).toEqual(Array.from(await a.data()));
    const va = unpackWeight(a, 'bfloat16');
    const x = (await va.data()) as Float32Array;
    const n = x.length;
    const mean = x.reduce((s, v) => s + v, 0) / n;
    const sd = Math.sqrt(x.reduce((s, v) => s + (v - mean) ** 2, 0) / n);
    const within = x.filter((v) => Math.abs(v - 1) < 0.5).length / n;
    expect(Math.abs(mean - 1)).toBeLessThan(0.01);
    expect(Math.abs(sd - 0.5)).toBeLessThan(0.01);
    expect(Math.abs(within - 0.6827)).toBeLessThan(0.01);
    // Neighbouring words are not correlated (a weak hash would show here).
    let cov = 0;
    for (let i = 0; i + 2 < n; i += 2) cov += (x[i]! - mean) * (x[i + 2]! - mean);
    expect(Math.abs(cov / (n / 2) / sd ** 2)).toBeLessThan(0.02);
    // Another seed, other words (all but a handful).
    const wa = await a.data();
    const wc = await c.data();
    expect(Array.from(wc).filter((w, i) => w === wa[i]).length).toBeLessThan(n / 200);
    tf.dispose([a, b, c, va]);
  });

  it('a product is one program, and a packed weight takes half the bytes', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const { packed } = randomHalfMatrix(64, 64, 'bfloat16', 3);
    const w = tf.tensor2d(packed, [64, 32], 'int32');
    const x = rnd([8, 64], 1);
    const start = gpuCounters();
    if (!start) throw new Error('no GPU counters on webgpu');
    const y = packedMatMul(x as tf.Tensor2D, w, 'bfloat16');
    expect(gpuCountersSince(start, gpuCounters() ?? start).programs).toBe(1);
    const bytes = tf.memory().numBytes;
    const wf = tf.zeros([64, 64]);
    expect(tf.memory().numBytes - bytes).toBe(2 * 64 * 32 * 4);
    tf.dispose([w, x, y, wf]);
  });

  it('refuses a float32 weight and a mismatched shape, naming the fix', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const x = tf.zeros([2, 4]) as tf.Tensor2D;
    const wf = tf.zeros([4, 2]) as tf.Tensor2D;
    const w = tf.zeros([6, 2], 'int32') as tf.Tensor2D;
    expect(() => packedMatMul(x, wf, 'bfloat16')).toThrow(/int32 \[rows, cols\/2\]/);
    expect(() => packedMatMul(x, w, 'bfloat16')).toThrow(/x \[2,4\] has 4 columns/);
    tf.dispose([x, wf, w]);
  });
});

describe.runIf(gpu.ok)('webgpu backend behaviour', () => {
  it('uses the WGSL fused ops on webgpu', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    expect(activeFusedOps()).toBe(webGpuFusedOps);
  });

  it('adds more tensors at once than a pipeline may bind (AddN in chunks, same sum)', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const xs = Array.from({ length: 40 }, (_, i) => tf.fill([3], i + 0.25));
    const s = tf.addN(xs);
    expect(Array.from(await s.data())).toEqual([790, 790, 790]);
    tf.dispose([s, ...xs]);
  });

  it('a GPU error makes the next read fail (GpuDeviceError) instead of returning garbage', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const x = tf.tensor1d([1, 2, 3]);
    const y = tf.mul(x, 2);
    // An invalid shader module: the device reports a validation error asynchronously, as an
    // event (the backend's own listener, added when the device opened, hears it first).
    const device = (
      tf.backend() as unknown as {
        device: {
          createShaderModule(d: object): void;
          addEventListener(type: 'uncapturederror', f: () => void, o: { once: true }): void;
        };
      }
    ).device;
    let hang: NodeJS.Timeout | undefined;
    const reported = new Promise<void>((resolve, reject) => {
      device.addEventListener('uncapturederror', () => resolve(), { once: true });
      hang = setTimeout(() => reject(new Error('the device reported no error in 60 s')), 60_000);
    });
    device.createShaderModule({ code: 'not a shader' });
    await reported.finally(() => clearTimeout(hang));
    await expect(y.data()).rejects.toBeInstanceOf(GpuDeviceError);
    tf.dispose([x, y]);
    // A new device starts clean.
    await releaseBackend();
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const z = tf.mul(tf.tensor1d([1, 2]), 3);
    expect(Array.from(await z.data())).toEqual([3, 6]);
    z.dispose();
  });
});

/**
 * The host sampler's rule (that of `sampleToken` in @poad/lora-model, written out here in the
 * plainest form: a full sort): rank by logit, larger first, ties by smaller index; keep the first
 * k; walk them subtracting exp(z/T − max/T) from u · total; greedy takes the first largest.
 */
function hostDraw(z: ArrayLike<number>, t: number, k: number, u: number) {
  const n = z.length;
  const lse = (() => {
    let m = -Infinity;
    for (let i = 0; i < n; i++) m = Math.max(m, z[i] as number);
    let s = 0;
    for (let i = 0; i < n; i++) s += Math.exp((z[i] as number) - m);
    return m + Math.log(s);
  })();
  if (t === 0) {
    let best = 0;
    for (let i = 1; i < n; i++) if ((z[i] as number) > (z[best] as number)) best = i;
    return { id: best, logProb: (z[best] as number) - lse, samplerLogProb: 0 };
  }
  const order = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => (z[b] as number) - (z[a] as number) || a - b,
  );
  const kept = order.slice(0, k > 0 ? Math.min(k, n) : n);
  const max = (z[kept[0]!] as number) / t;
  const p = kept.map((i) => Math.exp((z[i] as number) / t - max));
  const total = p.reduce((a, b) => a + b, 0);
  let rest = u * total;
  let pick = kept.length - 1;
  for (let j = 0; j < kept.length; j++) {
    rest -= p[j]!;
    if (rest < 0) {
      pick = j;
      break;
    }
  }
  const id = kept[pick]!;
  return { id, logProb: (z[id] as number) - lse, samplerLogProb: Math.log(p[pick]! / total) };
}

describe.runIf(gpu.ok)('webgpu generation ops', () => {
  it('sampleTokens draws what the host rule draws (greedy, top-k, all tokens, ties, wide rows)', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const sample = webGpuFusedOps.sampleTokens!;
    let seed = 7;
    const next = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    for (const vocab of [50, 300, 5000]) {
      const rows = 16;
      const z = new Float32Array(rows * vocab);
      for (let i = 0; i < z.length; i++) z[i] = Math.round((next() * 6 - 3) * 8) / 8;
      // Ties: row 1 all equal, row 2 two equal maxima, row 3 −0 beside +0 as the largest.
      z.fill(0.5, vocab, 2 * vocab);
      z[2 * vocab + 3] = 9;
      z[2 * vocab + 7] = 9;
      z.fill(-1, 3 * vocab, 4 * vocab);
      z[3 * vocab + 4] = -0;
      z[3 * vocab + 2] = 0;
      // Uniforms k / 2^32, as their 32 bits; among them 0, ½ and values next to 0 and 1.
      const ks = Array.from({ length: rows }, () => Math.floor(next() * 2 ** 32));
      ks[0] = 0;
      ks[5] = 2 ** 32 - 4096;
      ks[6] = 2 ** 31;
      ks[7] = 2 ** 32 - 1;
      ks[8] = 5;
      const us = ks.map((k) => k / 2 ** 32);
      for (const [t, k] of [
        [0, 0],
        [0.7, 5],
        [1, 0],
        [1.3, 1],
        [0.5, vocab - 1],
        [1, vocab + 3],
      ] as const) {
        const before = tf.memory().numTensors;
        const logits = tf.tensor2d(z, [rows, vocab]);
        const u = tf.tensor1d(
          Int32Array.from(ks, (k) => k | 0),
          'int32',
        );
        const { ids, record } = sample(logits, u, { temperature: t, topK: k });
        const got = new Int32Array((await record.data()) as Int32Array);
        const gotIds = Array.from((await ids.data()) as Int32Array);
        tf.dispose([logits, u, ids, record]);
        expect(tf.memory().numTensors).toBe(before);
        const floats = new Float32Array(got.buffer);
        for (let r = 0; r < rows; r++) {
          const want = hostDraw(z.subarray(r * vocab, (r + 1) * vocab), t, k, us[r]!);
          const what = `vocab ${vocab}, T ${t}, k ${k}, row ${r}`;
          expect(got[r], what).toBe(want.id);
          expect(gotIds[r], what).toBe(want.id);
          expect(Math.abs(floats[rows + r]! - want.logProb), what).toBeLessThan(1e-5);
          expect(Math.abs(floats[2 * rows + r]! - want.samplerLogProb), what).toBeLessThan(1e-5);
        }
      }
    }
  });

  it('cacheAttention over a cache written in place equals attention over each row’s real slots', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    // One tile of keys; then several tiles, and more columns than a workgroup has invocations.
    for (const [heads, kvHeads, hd, lens, prompt, extra] of [
      [4, 2, 8, [2, 5, 7], 7, 3],
      [2, 1, 80, [70, 130], 130, 40],
    ] as const) {
      const rows = lens.length;
      const slots = prompt + extra + 2;
      const kw = kvHeads * hd;
      const before = tf.memory().numTensors;
      let seed = 3;
      const next = () => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        return seed / 2 ** 32 - 0.5;
      };
      const q = Float32Array.from({ length: rows * heads * hd }, next);
      // Keys and values: the prompts (padding slots hold garbage), and the slots after them
      // (garbage too, until written below).
      const kh = Float32Array.from({ length: slots * rows * kw }, () => 4 * next());
      const vh = Float32Array.from({ length: slots * rows * kw }, () => 4 * next());
      const kc = tf.tensor3d(kh, [slots, rows, kw]);
      const vc = tf.tensor3d(vh, [slots, rows, kw]);
      const write = webGpuFusedOps.writeCacheSlot!;
      for (let t = 0; t < extra; t++) {
        const at = (prompt + t) * rows * kw;
        for (const h of [kh, vh]) {
          for (let i = 0; i < rows * kw; i++) h[at + i] = next();
        }
        const k2 = tf.tensor2d(kh.slice(at, at + rows * kw), [rows, kw]);
        const v2 = tf.tensor2d(vh.slice(at, at + rows * kw), [rows, kw]);
        write(kc, k2, prompt + t);
        write(vc, v2, prompt + t);
        tf.dispose([k2, v2]);
      }
      const qT = tf.tensor2d(q, [rows, heads * hd]);
      const lensT = tf.tensor1d([...lens], 'int32');
      const out = webGpuFusedOps.cacheAttention!(qT, kc, vc, lensT, { heads, prompt, extra });
      const got = await out.data();
      const want = new Float32Array(rows * heads * hd);
      for (let r = 0; r < rows; r++) {
        const real = [
          ...Array.from({ length: lens[r]! }, (_, j) => j),
          ...Array.from({ length: extra }, (_, t) => prompt + t),
        ];
        for (let h = 0; h < heads; h++) {
          const g = Math.floor(h / (heads / kvHeads));
          const at = (j: number, c: number) => (j * rows + r) * kw + g * hd + c;
          const s = real.map((j) => {
            let d = 0;
            for (let c = 0; c < hd; c++) d += q[(r * heads + h) * hd + c]! * kh[at(j, c)]!;
            return d / Math.sqrt(hd);
          });
          const m = Math.max(...s);
          const e = s.map((x) => Math.exp(x - m));
          const sum = e.reduce((a, b) => a + b, 0);
          for (let c = 0; c < hd; c++) {
            let acc = 0;
            real.forEach((j, i) => {
              acc += (e[i]! / sum) * vh[at(j, c)]!;
            });
            want[(r * heads + h) * hd + c] = acc;
          }
        }
      }
      close(got, want, 2e-5, `cached attention, ${slots} slots, head size ${hd}`);
      tf.dispose([qT, kc, vc, lensT, out]);
      expect(tf.memory().numTensors).toBe(before);
    }
  });
});
