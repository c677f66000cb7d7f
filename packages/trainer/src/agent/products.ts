/**
 * How a loaded model's frozen float32 products run on webgpu (TF.js's matmul or the tiled
 * program, per shape): fixed by `--matmul`, or a plan measured on this GPU and cached per adapter
 * and model shapes, and reused on `--resume`.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { CausalLM } from '@poad/lora-model';
import { writeJsonAtomicSync } from '@poad/run-kit';
import {
  describeProductPlan,
  type ProductChoice,
  type ProductPlan,
  ProductPlanError,
  parseProductPlan,
  productProgramsFingerprint,
  type TuneOptions,
} from '@poad/tfjs-kernels';
import type { MatMulOption } from '../run-options.js';

/** Where a run's product choice came from. */
export type ProductSource = 'fixed' | 'software adapter' | 'run' | 'cache' | 'tuned' | 'none';

/** Options of {@link chooseProducts}. */
export interface ChooseProductsOptions {
  matmul: MatMulOption;
  /** The webgpu adapter in words, and whether it is a CPU implementation (lavapipe, SwiftShader). */
  adapter: { description: string; software: boolean };
  /** The plan a resumed run recorded (environment.json), used again when its adapter is this one. */
  recorded?: unknown;
  /** Folder of measured plans per adapter and model shapes (default {@link productCacheDir}); false: none. */
  cacheDir?: string | false;
  /** Passed to the measurement (row counts, repetitions). */
  tune?: TuneOptions;
  log?: (line: string) => void;
}

/**
 * The folder of plans measured on this machine: `$POAD_CACHE_DIR/products`, else
 * `$XDG_CACHE_HOME/poad/products`, else `~/.cache/poad/products`.
 */
export function productCacheDir(): string {
  const root =
    process.env.POAD_CACHE_DIR ||
    join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'poad');
  return join(root, 'products');
}

/**
 * The cache file of the plan for these product shapes on this adapter, for the programs that run
 * now (`productProgramsFingerprint`: TF.js's version and the tiled program's WGSL on this device)
 * and the measurement's row counts and margin (unset: the defaults).
 */
export function productCacheFile(
  dir: string,
  model: CausalLM,
  adapter: string,
  tune: TuneOptions = {},
): string {
  const forms = model
    .frozenProducts()
    .map((p) => `${p.w.shape.join('x')}${p.transposed ? 'T' : ''}`)
    .sort();
  const key = JSON.stringify({
    version: 1,
    adapter,
    programs: productProgramsFingerprint(),
    forms,
    rows: tune.rows ?? null,
    margin: tune.margin ?? null,
  });
  return join(dir, `${createHash('sha256').update(key).digest('hex').slice(0, 16)}.json`);
}

/** `json` as a plan, or undefined after a warning (naming `where`) when it is not one. */
function planOrWarn(
  json: unknown,
  where: string,
  log: (line: string) => void,
): ProductPlan | undefined {
  try {
    return parseProductPlan(json, where);
  } catch (e) {
    if (!(e instanceof ProductPlanError)) throw e;
    log(`warning: ${e.message}; measuring again`);
    return undefined;
  }
}

/** The plan in `file` if it is one measured on `adapter`; undefined when absent or unreadable. */
function cachedPlan(
  file: string,
  adapter: string,
  log: (line: string) => void,
): ProductPlan | undefined {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  const plan = planOrWarn(json, file, log);
  return plan?.adapter === adapter ? plan : undefined;
}

/**
 * Sets how `model`'s frozen float32 products run on webgpu and says where that came from. `tfjs`
 * and `tiled` are taken as they are. `auto` keeps TF.js's matmul on a software adapter (its timings
 * say nothing about a GPU, and measuring there takes minutes); on a GPU it uses, in this order, the
 * plan a resumed run recorded for this adapter (so the resumed run computes what the first one
 * did), the plan cached on this machine for this adapter and these shapes (so runs of the same
 * settings compute the same), or a new measurement, which it caches. A model without frozen
 * float32 products (CPU backends; weights kept in 16 bits, which always run tiled) needs none.
 */
export async function chooseProducts(
  model: CausalLM,
  o: ChooseProductsOptions,
): Promise<{ choice: ProductChoice; source: ProductSource }> {
  const log = o.log ?? (() => {});
  if (model.frozenProducts().length === 0) return { choice: 'tfjs', source: 'none' };
  if (o.matmul !== 'auto') {
    model.useProducts(o.matmul);
    return { choice: o.matmul, source: 'fixed' };
  }
  if (o.adapter.software) return { choice: 'tfjs', source: 'software adapter' };
  const adapter = o.adapter.description;
  if (typeof o.recorded === 'object' && o.recorded !== null) {
    const plan = planOrWarn(o.recorded, 'environment.json model.products', log);
    if (plan?.adapter === adapter) {
      model.useProducts(plan);
      log(`frozen float32 products: ${describeProductPlan(plan)} (the run's plan)`);
      return { choice: plan, source: 'run' };
    }
    if (plan)
      log(
        `the run's product plan was measured on ${plan.adapter}, this is ${adapter}: measuring again (results differ from the first run's in the last bits)`,
      );
  }
  const cacheFile =
    o.cacheDir === false
      ? undefined
      : productCacheFile(o.cacheDir ?? productCacheDir(), model, adapter, o.tune);
  const cached = cacheFile ? cachedPlan(cacheFile, adapter, log) : undefined;
  if (cached) {
    model.useProducts(cached);
    log(`frozen float32 products: ${describeProductPlan(cached)} (plan cached in ${cacheFile})`);
    return { choice: cached, source: 'cache' };
  }
  const forms = 2 * new Set(model.frozenProducts().map((p) => `${p.w.shape}`)).size;
  log(`timing TF.js's matmul against the tiled program for ${forms} product forms on ${adapter}…`);
  const t0 = performance.now();
  const plan = await model.tuneProducts({ ...o.tune, adapter });
  log(
    `frozen float32 products: ${describeProductPlan(plan)} (timed in ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
  if (cacheFile) {
    try {
      mkdirSync(dirname(cacheFile), { recursive: true });
      writeJsonAtomicSync(cacheFile, plan);
    } catch (e) {
      log(`warning: could not cache the product plan in ${cacheFile}: ${(e as Error).message}`);
    }
  }
  return { choice: plan, source: 'tuned' };
}
