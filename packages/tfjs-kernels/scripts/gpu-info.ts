/**
 * What this machine offers the model: the WebGPU adapter Dawn finds (or the piece that is
 * missing), and the backend `initBackend('auto')` picks.
 *
 *   npm run gpu:info            (from the repository root)
 */
import { initBackend, releaseBackend, WebGpuUnavailableError } from '../src/index.js';

try {
  const gpu = await initBackend('webgpu', { allowSoftwareAdapter: true });
  const a = gpu.adapter;
  console.log(`WebGPU adapter: ${gpu.description.replace(/^webgpu on /, '')}`);
  if (a) {
    console.log(
      `  vendor ${a.vendor || '?'}, architecture ${a.architecture || '?'}, device ${a.device || '?'}`,
    );
    console.log(`  features: ${a.features.join(', ') || 'none'}`);
    console.log(`  opened with: ${a.enabledFeatures.join(', ') || 'no optional features'}`);
    console.log(
      `  subgroups: ${a.subgroupSize === null ? 'not used (none offered, another layout, or POAD_WEBGPU_SUBGROUPS=0)' : `${a.subgroupSize} lanes, contiguous (the tiled product shuffles through them)`}`,
    );
    const mb = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
    console.log(
      `  max buffer ${mb(a.limits.maxBufferSize)}, max storage binding ${mb(a.limits.maxStorageBufferBindingSize)}`,
    );
    if (a.software) {
      console.log(
        '  this is a software adapter (the CPU through Vulkan): --backend webgpu refuses it unless POAD_WEBGPU_ALLOW_SOFTWARE=1, and auto never picks it',
      );
    }
  }
} catch (e) {
  if (!(e instanceof WebGpuUnavailableError)) throw e;
  console.log(`WebGPU: unavailable (missing: ${e.missing})\n  ${e.message}`);
}
await releaseBackend();
const auto = await initBackend('auto');
console.log(`--backend auto picks: ${auto.description} (${auto.source})`);
await releaseBackend();
