/*
 * Subgroups (WGSL's `subgroups` extension) for the package's programs. TF.js assembles a
 * program's WGSL itself and puts its own declarations first, while WGSL wants `enable` directives
 * before any declaration; a program that uses subgroup built-ins therefore carries
 * {@link SUBGROUP_MARKER}, and the device's `createShaderModule` (wrapped by
 * {@link enableSubgroupDirective}) puts the directive at the top of such a module.
 *
 * WGSL does not say which lanes of a workgroup share a subgroup. The programs that shuffle values
 * between lanes assume the layout drivers use for a one-dimensional workgroup: subgroups of one
 * fixed size S, each a contiguous run of lanes starting at a multiple of S, lane i being
 * invocation i % S of its subgroup. {@link probeSubgroupLayout} runs one program when the device
 * opens to check exactly that, and the kernels use subgroups only where it holds.
 */

/** A line in a program's WGSL that asks for `enable subgroups;` at the top of its module. */
export const SUBGROUP_MARKER = '// poad: enable subgroups';

/**
 * The workgroup size the layout is checked for, and so the workgroup size of the programs that
 * shuffle through subgroups (the tiled product's).
 */
export const SUBGROUP_PROBE_LANES = 256;

/** Whether `s` is a subgroup size the programs take: a power of two in 4..128. */
export function isSubgroupSize(s: number): boolean {
  return s >= 4 && s <= 128 && (s & (s - 1)) === 0;
}

interface ShaderDevice {
  createShaderModule(descriptor: { code: string; label?: string }): unknown;
}

/**
 * Wraps `device.createShaderModule` so that a module whose code contains
 * {@link SUBGROUP_MARKER} starts with `enable subgroups;`. Other modules are left as they are.
 */
export function enableSubgroupDirective(device: object): void {
  const d = device as ShaderDevice;
  const create = d.createShaderModule;
  d.createShaderModule = function (this: unknown, descriptor) {
    if (
      descriptor.code.includes(SUBGROUP_MARKER) &&
      !/^\s*enable subgroups\s*;/.test(descriptor.code)
    ) {
      return create.call(this, { ...descriptor, code: `enable subgroups;\n${descriptor.code}` });
    }
    return create.call(this, descriptor);
  };
}

/** What {@link subgroupLayoutSize} reads back: each lane's subgroup size and invocation id. */
export interface SubgroupLanes {
  sizes: ArrayLike<number>;
  ids: ArrayLike<number>;
}

/**
 * The subgroup size S if every lane of a workgroup reported the same power of two in 4..128 as
 * its subgroup size and lane i reported i % S as its invocation id (contiguous, aligned runs);
 * null otherwise. Pure: the probe's reading, judged.
 */
export function subgroupLayoutSize(lanes: SubgroupLanes): number | null {
  const n = lanes.sizes.length;
  if (n === 0 || lanes.ids.length !== n) return null;
  const s = lanes.sizes[0] as number;
  if (!isSubgroupSize(s)) return null;
  for (let i = 0; i < n; i++) {
    if (lanes.sizes[i] !== s || lanes.ids[i] !== i % s) return null;
  }
  return s;
}

/** The raw WebGPU calls the probe makes (a device opened with the `subgroups` feature). */
interface ProbeDevice {
  features: ReadonlySet<string>;
  createShaderModule(descriptor: { code: string }): unknown;
  createComputePipeline(descriptor: {
    layout: 'auto';
    compute: { module: unknown; entryPoint: string };
  }): { getBindGroupLayout(i: number): unknown };
  createBuffer(descriptor: { size: number; usage: number }): {
    mapAsync(mode: number): Promise<void>;
    getMappedRange(): ArrayBuffer;
    unmap(): void;
    destroy(): void;
  };
  createBindGroup(descriptor: {
    layout: unknown;
    entries: { binding: number; resource: { buffer: unknown } }[];
  }): unknown;
  createCommandEncoder(): {
    beginComputePass(): {
      setPipeline(p: unknown): void;
      setBindGroup(i: number, g: unknown): void;
      dispatchWorkgroups(x: number): void;
      end(): void;
    };
    copyBufferToBuffer(a: unknown, ao: number, b: unknown, bo: number, size: number): void;
    finish(): unknown;
  };
  queue: { submit(buffers: unknown[]): void };
  pushErrorScope(filter: 'validation'): void;
  popErrorScope(): Promise<unknown>;
}

// GPUBufferUsage and GPUMapMode values, spelled out (not every runtime defines the globals).
const STORAGE = 0x80;
const COPY_SRC = 0x04;
const COPY_DST = 0x08;
const MAP_READ = 0x01;

/**
 * Runs one workgroup of {@link SUBGROUP_PROBE_LANES} lanes that writes each lane's subgroup size
 * and invocation id, and judges the layout with {@link subgroupLayoutSize}: the subgroup size the
 * kernels may use, or null (no `subgroups` feature on the device, a failed compile, or another
 * layout). One program and one read, when the device opens.
 */
export async function probeSubgroupLayout(device: object): Promise<number | null> {
  const d = device as ProbeDevice;
  if (!d.features.has('subgroups')) return null;
  const lanes = SUBGROUP_PROBE_LANES;
  const bytes = 2 * lanes * 4;
  let out: ReturnType<ProbeDevice['createBuffer']> | null = null;
  let read: ReturnType<ProbeDevice['createBuffer']> | null = null;
  let scoped = false;
  try {
    d.pushErrorScope('validation');
    scoped = true;
    const module = d.createShaderModule({
      code: `enable subgroups;
        @group(0) @binding(0) var<storage, read_write> lanes : array<u32>;
        @compute @workgroup_size(${lanes})
        fn main(@builtin(local_invocation_index) i : u32,
                @builtin(subgroup_size) size : u32,
                @builtin(subgroup_invocation_id) id : u32) {
          lanes[i] = size;
          lanes[${lanes}u + i] = id;
        }`,
    });
    const pipeline = d.createComputePipeline({
      layout: 'auto',
      compute: { module, entryPoint: 'main' },
    });
    out = d.createBuffer({ size: bytes, usage: STORAGE | COPY_SRC });
    read = d.createBuffer({ size: bytes, usage: MAP_READ | COPY_DST });
    const group = d.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [{ binding: 0, resource: { buffer: out } }],
    });
    const encoder = d.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(1);
    pass.end();
    encoder.copyBufferToBuffer(out, 0, read, 0, bytes);
    d.queue.submit([encoder.finish()]);
    scoped = false;
    if (await d.popErrorScope()) return null;
    await read.mapAsync(MAP_READ);
    const words = new Uint32Array(read.getMappedRange().slice(0));
    read.unmap();
    return subgroupLayoutSize({ sizes: words.subarray(0, lanes), ids: words.subarray(lanes) });
  } catch {
    return null;
  } finally {
    if (scoped) await d.popErrorScope().catch(() => undefined);
    out?.destroy();
    read?.destroy();
  }
}

let deviceSize: number | null = null;
let allowed = true;

/** Records the subgroup size the open device's probe found (null: none usable). Internal. */
export function setDeviceSubgroupSize(size: number | null): void {
  deviceSize = size;
}

/**
 * Lets the package's programs use subgroups where the device has a usable layout (the default),
 * or not: `setSubgroupUse(false)` runs the workgroup-memory forms everywhere (for comparing the
 * two, or to rule subgroups out). `POAD_WEBGPU_SUBGROUPS=0` in the environment does the same
 * when the backend starts.
 */
export function setSubgroupUse(on: boolean): void {
  allowed = on;
}

/** The subgroup size the programs use now, or null when they use none. */
export function subgroupSize(): number | null {
  return allowed ? deviceSize : null;
}
