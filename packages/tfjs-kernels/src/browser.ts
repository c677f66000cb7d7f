/**
 * `@poad/tfjs-kernels` in a browser (the package's `browser` export condition): everything of
 * the Node entry that needs no Node built-ins, and a browser {@link initBackend} (the page's
 * WebGPU, wasm, cpu).
 */

export type {
  BrowserBackendChoice as BackendChoice,
  BrowserBackendInfo as BackendInfo,
  BrowserBackendOptions as BackendOptions,
} from './browser-backend.js';
export { initBackend, releaseBackend } from './browser-backend.js';
export * from './core.js';
