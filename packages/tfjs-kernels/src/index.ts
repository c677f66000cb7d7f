/**
 * `@poad/tfjs-kernels`: TensorFlow.js backends and kernels for LLaMA-family models. Backend
 * choice ({@link initBackend}: tfjs-node, WebGPU through Dawn, wasm with the optional
 * `@poad/tfjs-native` kernels, cpu), WGSL programs and fused ops with written-out gradients,
 * batched products, and the gradient registrations TF.js lacks in Node.
 *
 * Nothing here initialises a TF.js backend on import: call {@link initBackend} (or set one up
 * yourself and call {@link registerGradients}) first.
 */

// Backends (Node: tfjs-node, Dawn's WebGPU, wasm with @poad/tfjs-native, cpu)
export type { BackendChoice, BackendInfo, BackendOptions } from './backend.js';
export { initBackend, releaseBackend } from './backend.js';
export * from './core.js';
