import type { KernelConfig, KernelFunc, NamedAttrMap, TensorInfo } from '@tensorflow/tfjs-core';
import type { NativeAddon } from '../addon.js';

/** Arguments tfjs passes to a kernel function. */
export type KernelArgs = Parameters<KernelFunc>[0];

/** What a native kernel needs: the addon and the stock kernel for cases it does not handle. */
export interface KernelContext {
  addon: NativeAddon;
  stock: KernelConfig | undefined;
}

/** Run the stock kernel, or explain that there is none for this input. */
export function runStock(ctx: KernelContext, args: KernelArgs, why: string): TensorInfo {
  if (!ctx.stock) throw new Error(`native kernel cannot handle ${why} and no stock kernel exists`);
  return ctx.stock.kernelFunc(args) as TensorInfo;
}

/** Read a boolean attribute (absent = false). */
export function boolAttr(attrs: NamedAttrMap | undefined, name: string): boolean {
  return attrs?.[name] === true;
}
