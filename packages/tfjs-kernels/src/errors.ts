import { UserError } from '@poad/config';

/** Thrown when a requested backend cannot be loaded or initialised. */
export class BackendUnavailableError extends UserError {
  readonly backend: string;
  constructor(backend: string, message: string) {
    super(`backend "${backend}": ${message}`);
    this.name = 'BackendUnavailableError';
    this.backend = backend;
  }
}

/**
 * The piece a WebGPU backend lacks: the optional npm packages (`module`), the Vulkan loader
 * (`vulkan-loader`), a GPU driver Dawn accepts (`driver`), a hardware adapter where only a
 * software one exists (`software-adapter`), or the device itself (`device`).
 */
export type WebGpuMissing = 'module' | 'vulkan-loader' | 'driver' | 'software-adapter' | 'device';

/** Thrown by `initBackend('webgpu')` when no usable GPU adapter is found; says which piece is missing. */
export class WebGpuUnavailableError extends BackendUnavailableError {
  readonly missing: WebGpuMissing;
  constructor(missing: WebGpuMissing, message: string) {
    super('webgpu', message);
    this.name = 'WebGpuUnavailableError';
    this.missing = missing;
  }
}

/**
 * Thrown by a read from the webgpu backend after the GPU reported an error (an invalid program,
 * out of memory, a lost device): the values computed since then cannot be trusted, so the read
 * fails instead of returning them.
 */
export class GpuDeviceError extends Error {
  constructor(message: string) {
    super(`webgpu: ${message}`);
    this.name = 'GpuDeviceError';
  }
}
