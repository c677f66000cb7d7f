// The package is the model: its public API stays small and holds no backend or kernel internals.
import { publicNames } from '@poad/dev-kit';
import { expect, it } from 'vitest';

const src = new URL('../src/', import.meta.url).pathname;

it('exports at most 50 names, none of them a backend or kernel internal', () => {
  for (const entry of ['index.ts', 'browser.ts']) {
    const names = publicNames(`${src}${entry}`);
    expect(names.length, entry).toBeLessThanOrEqual(50);
    expect(names, entry).toContain('loadCausalLM');
    for (const internal of [
      'setBatchMatMulRoute',
      'registerSegmentSumKernel',
      'registerGradients',
      'initBackend',
      'webGpuFusedOps',
    ])
      expect(names, entry).not.toContain(internal);
  }
}, 60_000);
