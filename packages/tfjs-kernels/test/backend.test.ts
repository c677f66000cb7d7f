import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import * as pkg from '../src/index.js';

describe('initBackend', () => {
  it('importing the package initialises no backend', () => {
    expect(typeof pkg.initBackend).toBe('function');
    expect(tf.engine().backendName ?? null).toBeNull();
    expect(tf.findBackendFactory('wasm')).toBeNull();
    expect(tf.findBackendFactory('cpu')).toBeNull();
  });

  it('auto falls back to wasm when the native packages are absent, and says so', async () => {
    const info = await pkg.initBackend('auto');
    // The native bindings are optional; on machines without them auto must land on wasm.
    expect(['tensorflow', 'wasm']).toContain(info.backend);
    expect(tf.getBackend()).toBe(info.backend);
    if (info.backend === 'wasm') {
      // With the optional @poad/tfjs-native addon built, wasm runs with native kernels and says so.
      expect([
        '@tensorflow/tfjs-backend-wasm',
        '@tensorflow/tfjs-backend-wasm + @poad/tfjs-native',
      ]).toContain(info.source);
      expect(info.description).toMatch(
        info.source.includes('native') ? /^wasm \+ native kernels \(.+, \d+ threads?\)$/ : /^wasm$/,
      );
    }
  });

  it('POAD_NATIVE_KERNELS=0 keeps the stock wasm kernels', async () => {
    const { execFileSync } = await import('node:child_process');
    const out = execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        "import { initBackend } from '@poad/tfjs-kernels'; console.log(JSON.stringify(await initBackend('wasm')))",
      ],
      { encoding: 'utf8', env: { ...process.env, POAD_NATIVE_KERNELS: '0' } },
    );
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({
      backend: 'wasm',
      source: '@tensorflow/tfjs-backend-wasm',
      description: 'wasm',
    });
  });

  it("threads sets the native kernels' thread count and reports it; bad counts are rejected", async () => {
    const before = await pkg.initBackend('wasm');
    if (before.threads === undefined) {
      // Stock wasm kernels: nothing to set, and nothing claimed.
      expect((await pkg.initBackend('wasm', { threads: 3 })).threads).toBeUndefined();
    } else {
      try {
        for (const n of [1, 3]) {
          const info = await pkg.initBackend('wasm', { threads: n });
          expect(info.threads).toBe(n);
          expect(info.description).toMatch(new RegExp(`, ${n} threads?\\)$`));
        }
        // Without the option the count stays what it was last set to.
        expect((await pkg.initBackend('wasm')).threads).toBe(3);
      } finally {
        await pkg.initBackend('wasm', { threads: before.threads });
      }
    }
    for (const bad of [0, -1, 1.5]) {
      await expect(pkg.initBackend('wasm', { threads: bad })).rejects.toThrow(
        /threads must be a positive integer/,
      );
    }
  });

  it('explicit choices switch backends; unavailable ones throw a typed error', async () => {
    expect((await pkg.initBackend('cpu')).backend).toBe('cpu');
    expect(tf.getBackend()).toBe('cpu');
    expect((await pkg.initBackend('wasm')).backend).toBe('wasm');
    let native = true;
    try {
      await import('@tensorflow/tfjs-node' as string);
    } catch {
      native = false;
    }
    if (!native) {
      await expect(pkg.initBackend('tensorflow')).rejects.toBeInstanceOf(
        pkg.BackendUnavailableError,
      );
    }
    await expect(pkg.initBackend('nope' as 'cpu')).rejects.toBeInstanceOf(
      pkg.BackendUnavailableError,
    );
  });

  it('registers the gradients and the row-scatter kernel it promises', async () => {
    for (const b of ['cpu', 'wasm'] as const) {
      await pkg.initBackend(b);
      expect(tf.getGradient('BatchMatMul')).toBeDefined();
      expect(tf.getGradient('GatherV2')).toBeDefined();
      expect(tf.getKernel('UnsortedSegmentSum', b)).toBeDefined();
    }
  });
});
