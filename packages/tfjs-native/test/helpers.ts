import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-wasm';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { beforeAll, describe, expect } from 'vitest';
import {
  isNativeAvailable,
  nativeUnavailableReason,
  registerNativeKernels,
  unregisterNativeKernels,
} from '../src/index.js';

/**
 * Tests of the native path run when the addon is built, and always under CI, where a missing
 * addon must make them fail rather than skip.
 */
export const runNative = isNativeAvailable() || Boolean(process.env.CI);

/**
 * `beforeAll` of the tests of the native path: the addon must load (else the reason fails the
 * test), the wasm backend becomes current, and the native kernels are unregistered afterwards.
 */
async function setUpNative(): Promise<() => void> {
  expect(isNativeAvailable(), nativeUnavailableReason() ?? '').toBe(true);
  await useWasm();
  return () => {
    unregisterNativeKernels();
  };
}

/**
 * A describe block of tests of the native path: run as {@link runNative} says, set up by
 * {@link setUpNative}.
 */
export function describeNative(name: string, body: () => void): void {
  describe.runIf(runNative)(name, () => {
    beforeAll(setUpNative);
    body();
  });
}

/** Make the wasm backend current. */
export async function useWasm(): Promise<void> {
  await tf.setBackend('wasm');
  await tf.ready();
}

/** Run `fn` with the stock wasm kernels, then restore the previous registration. */
export function withStock<T>(fn: () => T): T {
  const had = unregisterNativeKernels().length > 0;
  try {
    return fn();
  } finally {
    if (had) registerNativeKernels();
  }
}

/** Run `fn` with the native kernels registered (throws if they cannot be). */
export function withNative<T>(fn: () => T): T {
  const res = registerNativeKernels();
  if (res.kernels.length === 0) throw new Error(`native kernels unavailable: ${res.reason}`);
  return fn();
}

/** `fn` run with the stock kernels, then with the native ones. */
export function stockAndNative<T>(fn: () => T): { stock: T; native: T } {
  return { stock: withStock(fn), native: withNative(fn) };
}
