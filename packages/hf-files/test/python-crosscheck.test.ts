import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCheckpoint, writeCheckpoint } from '../src/checkpoint.js';
import { float32ToBfloat16Bits, float32ToFloat16Bits } from '../src/half.js';
import { readSafetensorsFile, writeSafetensorsFile } from '../src/safetensors-file.js';
import { parseSafetensors } from '../src/safetensors-read.js';
import { f32Bits, randomNormal, randomTensors, tinyConfig, withTempDir } from './test-helpers.js';

// Debian's interpreter: its python3-torch package installs there, not into other Pythons on PATH.
const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./safetensors_reference.py', import.meta.url));
const probe = spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' });
const hasTorch = probe.status === 0;
const inCI = Boolean(process.env.CI);

interface PyTensor {
  dtype: string;
  shape: number[];
  bits?: number[];
  f32bits?: number[];
  f16bits?: number[];
  bf16bits?: number[];
  values?: number[];
}
interface PyReport {
  metadata: Record<string, string>;
  tensors: Record<string, PyTensor>;
}

function runPython(args: string[]): unknown {
  const r = spawnSync(PYTHON, [SCRIPT, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${SCRIPT} ${args[0]} failed:\n${r.stderr}`);
  return JSON.parse(r.stdout);
}
const pyWrite = (path: string): PyReport => runPython(['write', path]) as PyReport;
const pyCheckpoint = (dir: string): PyReport => runPython(['checkpoint', dir]) as PyReport;
const pyRead = (...paths: string[]): PyReport[] => runPython(['read', ...paths]) as PyReport[];

const isNaN16 = (b: number): boolean => (b & 0x7fff) > 0x7c00;
const isNaNBf16 = (b: number): boolean => (b & 0x7fff) > 0x7f80;
function sameOrBothNaN(a: number[], b: number[], isNaNBits: (x: number) => boolean): boolean {
  if (a.length !== b.length) return false;
  return a.every((x, i) => x === b[i] || (isNaNBits(x) && isNaNBits(b[i]!)));
}

if (!hasTorch && !inCI) {
  console.warn(
    `python-crosscheck: skipped, ${PYTHON} cannot import torch (apt-get install python3-torch); CI fails instead of skipping`,
  );
}

describe.skipIf(!hasTorch && !inCI)(
  'safetensors cross-check with PyTorch',
  { timeout: 30_000 },
  () => {
    beforeAll(() => {
      if (!hasTorch) {
        throw new Error(
          `${PYTHON} cannot import torch (${probe.error?.message ?? probe.stderr}); CI must install python3-torch`,
        );
      }
    });

    it('reads a file written by an independent Python writer bit-exactly', async () => {
      await withTempDir(async (dir) => {
        const path = join(dir, 'py.safetensors');
        const py = pyWrite(path);
        const fromDisk = await readSafetensorsFile(path);
        const fromBytes = parseSafetensors(new Uint8Array(await readFile(path)));
        expect(fromDisk.metadata).toEqual(py.metadata);
        expect([...fromDisk.tensors.keys()].sort()).toEqual(Object.keys(py.tensors).sort());
        for (const [name, want] of Object.entries(py.tensors)) {
          for (const got of [fromDisk.tensors.get(name)!, fromBytes.tensors.get(name)!]) {
            expect(got.dtype, name).toBe(want.dtype);
            expect(got.shape, name).toEqual(want.shape);
            if (want.f32bits !== undefined) expect(f32Bits(got.data), name).toEqual(want.f32bits);
            else expect(Array.from(got.data), name).toEqual(want.values!.map(Math.fround));
          }
        }
      });
    });

    it('writes F32, F16 and BF16 that PyTorch reads, rounding exactly as torch does', async () => {
      await withTempDir(async (dir) => {
        const special = [
          0,
          -0,
          1,
          -2.5,
          1 / 3,
          65504,
          65519,
          65520,
          7e4,
          6e-8,
          2 ** -25,
          3 * 2 ** -25,
          1e-5,
          1 + 2 ** -11,
          1 + 3 * 2 ** -11,
          1 + 2 ** -8,
          1 + 3 * 2 ** -8,
          1e-40,
          -1e-45,
          3.4e38,
          Number.POSITIVE_INFINITY,
          Number.NEGATIVE_INFINITY,
          Number.NaN,
          -Number.NaN,
        ];
        const x = new Float32Array([
          ...special,
          ...randomNormal(200, 7, 10),
          ...randomNormal(50, 8, 1e-5),
        ]);
        const path = join(dir, 'ts.safetensors');
        await writeSafetensorsFile(
          path,
          {
            x: { shape: [x.length], data: x },
            x16: { shape: [x.length], data: x, storeAs: 'F16' },
            xbf: { shape: [2, x.length / 2], data: x, storeAs: 'BF16' },
            scalar: { shape: [], data: new Float32Array([-3.5]) },
            empty: { shape: [0, 4], data: new Float32Array(0) },
          },
          { step: '12' },
        );
        const [py] = pyRead(path) as [PyReport];
        expect(py.metadata).toEqual({ format: 'pt', step: '12' });
        const t = py.tensors;
        expect(t.x!.bits).toEqual(f32Bits(x));
        expect(t.x16!.dtype).toBe('F16');
        // NaN has many encodings and torch's vectorised and scalar paths pick different ones, so
        // NaN is compared as "some NaN"; every other value must match bit for bit.
        expect(sameOrBothNaN(t.x16!.bits!, t.x!.f16bits!, isNaN16)).toBe(true);
        expect(t.x16!.bits).toEqual(Array.from(x, float32ToFloat16Bits));
        expect(t.xbf!.dtype).toBe('BF16');
        expect(t.xbf!.shape).toEqual([2, x.length / 2]);
        expect(sameOrBothNaN(t.xbf!.bits!, t.x!.bf16bits!, isNaNBf16)).toBe(true);
        expect(t.xbf!.bits!.filter(isNaNBf16)).toEqual([0x7fc0, 0x7fc0]);
        expect(t.xbf!.bits).toEqual(Array.from(x, float32ToBfloat16Bits));
        expect(t.scalar).toMatchObject({ shape: [], bits: f32Bits(new Float32Array([-3.5])) });
        expect(t.empty).toMatchObject({ shape: [0, 4], bits: [] });
      });
    });

    it('reads a BF16 sharded checkpoint folder laid out as Hugging Face saves it', async () => {
      await withTempDir(async (dir) => {
        const py = pyCheckpoint(dir);
        const ckpt = await readCheckpoint(dir);
        expect(ckpt.config).toMatchObject({
          model_type: 'llama',
          num_key_value_heads: 1,
          torch_dtype: 'bfloat16',
        });
        expect(ckpt.unexpectedTensors).toEqual([]);
        expect([...ckpt.tensors.keys()].sort()).toEqual(Object.keys(py.tensors).sort());
        for (const [name, want] of Object.entries(py.tensors)) {
          const got = ckpt.tensors.get(name)!;
          expect(got.dtype).toBe('BF16');
          expect(got.shape).toEqual(want.shape);
          expect(f32Bits(got.data), name).toEqual(want.f32bits);
        }
      });
    });

    it('writes sharded checkpoints whose every shard PyTorch reads', async () => {
      await withTempDir(async (dir) => {
        const config = tinyConfig();
        const tensors = randomTensors(config, 3);
        await writeCheckpoint(dir, config, tensors, { maxShardBytes: 2000 });
        const index = JSON.parse(await readFile(join(dir, 'model.safetensors.index.json'), 'utf8'));
        const shards = [...new Set(Object.values(index.weight_map as Record<string, string>))];
        expect(shards.length).toBeGreaterThan(1);
        const seen = new Set<string>();
        const reports = pyRead(...shards.map((s) => join(dir, s)));
        for (const [i, shard] of shards.entries()) {
          const py = reports[i]!;
          for (const [name, t] of Object.entries(py.tensors)) {
            expect(index.weight_map[name]).toBe(shard);
            expect(t.bits).toEqual(f32Bits(tensors.get(name)!.data));
            seen.add(name);
          }
        }
        expect([...seen].sort()).toEqual([...tensors.keys()].sort());
      });
    });
  },
);
