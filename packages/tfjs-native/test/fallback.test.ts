import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  isNativeAvailable,
  nativeKernelsRegistered,
  nativeUnavailableReason,
  registerNativeKernels,
  setNativeAddonPath,
} from '../src/index.js';
import { useWasm } from './helpers.js';

const root = resolve(__dirname, '..');

describe('without the addon', () => {
  beforeAll(async () => {
    await useWasm();
  });
  afterEach(() => {
    setNativeAddonPath(undefined);
  });

  it('reports a missing addon and registers nothing; TF.js keeps working', () => {
    setNativeAddonPath(join(tmpdir(), 'poad-no-such-dir', 'poad_native.node'));
    expect(isNativeAvailable()).toBe(false);
    expect(nativeUnavailableReason()).toMatch(/missing.*npm rebuild @poad\/tfjs-native/);
    const res = registerNativeKernels();
    expect(res.kernels).toEqual([]);
    expect(res.reason).toMatch(/missing/);
    expect(res.description).toBe('wasm');
    expect(nativeKernelsRegistered()).toEqual([]);
    const out = tf.tidy(() =>
      Array.from(tf.matMul(tf.tensor2d([1, 2, 3, 4], [2, 2]), tf.eye(2)).dataSync()),
    );
    expect(out).toEqual([1, 2, 3, 4]);
  });

  it('reports an addon that fails to load', () => {
    const dir = mkdtempSync(join(tmpdir(), 'poad-native-'));
    const bad = join(dir, 'poad_native.node');
    writeFileSync(bad, 'not a shared object');
    setNativeAddonPath(bad);
    expect(isNativeAvailable()).toBe(false);
    expect(nativeUnavailableReason()).toMatch(/failed to load/);
    expect(registerNativeKernels().kernels).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('is disabled by POAD_NATIVE_KERNELS=0 and ignores other backends', () => {
    const saved = process.env.POAD_NATIVE_KERNELS;
    process.env.POAD_NATIVE_KERNELS = '0';
    try {
      const res = registerNativeKernels();
      expect(res.kernels).toEqual([]);
      expect(res.reason).toMatch(/POAD_NATIVE_KERNELS=0/);
    } finally {
      if (saved === undefined) delete process.env.POAD_NATIVE_KERNELS;
      else process.env.POAD_NATIVE_KERNELS = saved;
    }
    const cpu = registerNativeKernels('cpu');
    expect(cpu.kernels).toEqual([]);
    expect(cpu.reason).toMatch(/only extend the wasm backend/);
  });
});

describe('install script', () => {
  function copyPackage(): string {
    const dir = mkdtempSync(join(tmpdir(), 'poad-native-install-'));
    for (const entry of ['binding.gyp', 'native', 'scripts']) {
      cpSync(join(root, entry), join(dir, entry), { recursive: true });
    }
    return dir;
  }

  it('exits 0 with one line saying how to enable the addon when the build fails', () => {
    const dir = copyPackage();
    try {
      const res = spawnSync(process.execPath, [join(dir, 'scripts', 'install.cjs')], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, POAD_BLAS_LIBS: '-lpoad_no_such_blas', POAD_NATIVE_VERBOSE: '0' },
      });
      expect(res.status).toBe(0);
      const lines = res.stdout.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /not built.*apt-get install libopenblas-dev.*npm rebuild @poad\/tfjs-native/,
      );
      expect(existsSync(join(dir, 'build', 'Release', 'poad_native.node'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('picks the BLAS from POAD_BLAS_LIBS, else pkg-config or -lopenblas', () => {
    const script = join(root, 'scripts', 'blas-config.cjs');
    const run = (what: string, env: Record<string, string>) =>
      spawnSync(process.execPath, [script, what], {
        encoding: 'utf8',
        env: { ...process.env, ...env },
      });
    const custom = { POAD_BLAS_LIBS: '-lmyblas', POAD_BLAS_DEFINES: 'MY_BLAS' };
    expect(run('libs', custom).stdout.trim()).toBe('-lmyblas');
    expect(run('defines', custom).stdout.trim()).toBe('MY_BLAS');
    if (process.platform === 'linux') {
      expect(run('libs', {}).stdout).toMatch(/-l(open)?blas|-lcblas/);
    }
    expect(run('nonsense', {}).status).toBe(1);
  });

  it('can be skipped with POAD_NATIVE_SKIP_BUILD=1', () => {
    const dir = copyPackage();
    try {
      const res = spawnSync(process.execPath, [join(dir, 'scripts', 'install.cjs')], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, POAD_NATIVE_SKIP_BUILD: '1' },
      });
      expect(res.status).toBe(0);
      expect(res.stdout).toMatch(/POAD_NATIVE_SKIP_BUILD=1/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
