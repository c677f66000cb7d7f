/**
 * The host memory loading a model takes: array buffers and resident set held after
 * `loadCausalLM` returns (what waits for its upload to the device, on webgpu until first use),
 * and the resident set's peak during the load.
 *
 *   POAD_WEBGPU_ALLOW_SOFTWARE=1 node --expose-gc --import tsx packages/lora-model/scripts/load-memory.ts \
 *     MODEL_DIR [--backend webgpu|wasm|cpu] [--weight-dtype auto|float32|bfloat16|float16]
 */
import { initBackend } from '@poad/tfjs-kernels';
import { loadCausalLM, type WeightDtype } from '../src/index.js';

const argv = process.argv.slice(2);
const option = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const dir = argv[0];
const gc = (globalThis as { gc?: () => void }).gc;
if (!dir || dir.startsWith('--') || !gc) {
  console.error(
    'usage: node --expose-gc --import tsx packages/lora-model/scripts/load-memory.ts MODEL_DIR [--backend B] [--weight-dtype D]',
  );
  process.exit(2);
}
const backend = (option('backend') ?? 'webgpu') as 'webgpu' | 'wasm' | 'cpu';
await initBackend(backend, {
  allowSoftwareAdapter: process.env.POAD_WEBGPU_ALLOW_SOFTWARE === '1',
});
gc();
const before = process.memoryUsage();
let peak = before.rss;
const timer = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 5);
const model = await loadCausalLM(dir, {
  weightDtype: (option('weight-dtype') ?? 'auto') as WeightDtype,
});
peak = Math.max(peak, process.memoryUsage().rss);
clearInterval(timer);
gc();
const after = process.memoryUsage();
const mb = (n: number) => Math.round(n / 2 ** 20);
console.log(
  JSON.stringify({
    model: dir,
    backend,
    storage: model.weights.embedPacked ?? 'float32',
    heldArrayBuffersMb: mb(after.arrayBuffers - before.arrayBuffers),
    heldRssMb: mb(after.rss - before.rss),
    peakRssMb: mb(peak - before.rss),
  }),
);
process.exit(0);
