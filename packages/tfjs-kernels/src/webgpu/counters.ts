/*
 * Counts of the work a WebGPU device is handed, taken at the device's own entry points: every
 * `dispatchWorkgroups` (one GPU program run) and every buffer mapped for reading (one host read,
 * which waits for the queue to drain before its bytes come back). Each count goes to the phase
 * named last with `setGpuPhase`, so a training loop can say where its programs and reads come
 * from. The counts depend on the programs a step runs, not on the GPU: a software adapter gives
 * the same numbers as any other, so tests can check them.
 */

/** Work handed to the GPU: programs dispatched, buffers mapped for reading, bytes read back. */
export interface GpuWork {
  /** GPU programs dispatched (`dispatchWorkgroups` and `dispatchWorkgroupsIndirect` calls). */
  programs: number;
  /** Buffers mapped for reading: each waits for the device, a round trip from the host. */
  reads: number;
  /** Bytes of those buffers. */
  readBytes: number;
}

/** All work since the device opened, in total and by phase (see {@link setGpuPhase}). */
export interface GpuCounters extends GpuWork {
  /** The same counts by the phase that was current when the work was handed over. */
  phases: Record<string, GpuWork>;
}

/** The phase work goes to before any {@link setGpuPhase}, and between named phases. */
export const OTHER_PHASE = 'other';

const byPhase = new Map<string, GpuWork>();
let current: GpuWork = phaseWork(OTHER_PHASE);
let currentName = OTHER_PHASE;
let counting = false;

function phaseWork(name: string): GpuWork {
  let w = byPhase.get(name);
  if (!w) {
    w = { programs: 0, reads: 0, readBytes: 0 };
    byPhase.set(name, w);
  }
  return w;
}

/**
 * Names the phase that the work handed to the GPU from now on belongs to (e.g. `acting`,
 * `values`, `update`, `checkpoint`) and returns the previous one, so that a caller can restore
 * it. A read is counted when it is asked for, so it goes to the phase that asked. Costs nothing
 * when no WebGPU device is open.
 */
export function setGpuPhase(name: string): string {
  const previous = currentName;
  currentName = name;
  current = phaseWork(name);
  return previous;
}

/** The phase {@link setGpuPhase} named last. */
export function gpuPhase(): string {
  return currentName;
}

/** Runs `fn` with `name` as the phase, then restores the phase that was current before. */
export async function withGpuPhase<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
  const previous = setGpuPhase(name);
  try {
    return await fn();
  } finally {
    setGpuPhase(previous);
  }
}

/**
 * A copy of the counts since the first WebGPU device of this process opened (in total and by
 * phase), or null while none has (the counts exist on `webgpu` only). Take one before and one
 * after a piece of work and subtract them with {@link gpuCountersSince}.
 */
export function gpuCounters(): GpuCounters | null {
  if (!counting) return null;
  const phases: Record<string, GpuWork> = {};
  const total: GpuWork = { programs: 0, reads: 0, readBytes: 0 };
  for (const [name, w] of byPhase) {
    if (w.programs === 0 && w.reads === 0) continue;
    phases[name] = { ...w };
    total.programs += w.programs;
    total.reads += w.reads;
    total.readBytes += w.readBytes;
  }
  return { ...total, phases };
}

/** The work counted between two {@link gpuCounters} snapshots (`later` − `earlier`), by phase. */
export function gpuCountersSince(earlier: GpuCounters, later: GpuCounters): GpuCounters {
  const phases: Record<string, GpuWork> = {};
  for (const [name, w] of Object.entries(later.phases)) {
    const e = earlier.phases[name] ?? { programs: 0, reads: 0, readBytes: 0 };
    const d = {
      programs: w.programs - e.programs,
      reads: w.reads - e.reads,
      readBytes: w.readBytes - e.readBytes,
    };
    if (d.programs !== 0 || d.reads !== 0) phases[name] = d;
  }
  return {
    programs: later.programs - earlier.programs,
    reads: later.reads - earlier.reads,
    readBytes: later.readBytes - earlier.readBytes,
    phases,
  };
}

/** The parts of a WebGPU device the counters wrap (structural, as in adapter.ts). */
interface CountableDevice {
  createCommandEncoder(...args: unknown[]): unknown;
  createBuffer(descriptor: { size: number; usage: number }, ...rest: unknown[]): unknown;
}
interface PassLike {
  dispatchWorkgroups(...args: unknown[]): unknown;
  dispatchWorkgroupsIndirect?(...args: unknown[]): unknown;
}
interface EncoderLike {
  beginComputePass(...args: unknown[]): PassLike;
}
interface BufferLike {
  readonly size: number;
  mapAsync(mode: number, offset?: number, size?: number): Promise<unknown>;
}

/** WebGPU's `GPUBufferUsage.MAP_READ` and `GPUMapMode.READ`. */
const MAP_READ_USAGE = 0x0001;
const READ_MODE = 0x0001;

/**
 * Makes `device` count its work into this module's counters: its command encoders' compute
 * passes count every dispatch, and its buffers that can be mapped for reading count every read.
 * Wraps the device object's own methods (nothing global is patched); call it before the device
 * is handed to TF.js.
 */
export function countDeviceWork(device: object): void {
  const d = device as CountableDevice;
  const createEncoder = d.createCommandEncoder;
  const createBuffer = d.createBuffer;
  d.createCommandEncoder = function (this: unknown, ...args: unknown[]) {
    const encoder = createEncoder.apply(this, args) as EncoderLike;
    const begin = encoder.beginComputePass;
    encoder.beginComputePass = function (this: unknown, ...passArgs: unknown[]) {
      const pass = begin.apply(this, passArgs);
      const dispatch = pass.dispatchWorkgroups;
      pass.dispatchWorkgroups = function (this: unknown, ...a: unknown[]) {
        current.programs++;
        return dispatch.apply(this, a);
      };
      const indirect = pass.dispatchWorkgroupsIndirect;
      if (indirect) {
        pass.dispatchWorkgroupsIndirect = function (this: unknown, ...a: unknown[]) {
          current.programs++;
          return indirect.apply(this, a);
        };
      }
      return pass;
    };
    return encoder;
  };
  d.createBuffer = function (this: unknown, descriptor, ...rest) {
    const buffer = createBuffer.call(this, descriptor, ...rest) as BufferLike;
    if ((descriptor.usage & MAP_READ_USAGE) !== 0) {
      const map = buffer.mapAsync;
      buffer.mapAsync = function (this: BufferLike, ...a: Parameters<BufferLike['mapAsync']>) {
        const [mode, offset, size] = a;
        if ((mode & READ_MODE) !== 0) {
          current.reads++;
          current.readBytes += size ?? this.size - (offset ?? 0);
        }
        return map.apply(this, a);
      };
    }
    return buffer;
  };
  counting = true;
}
