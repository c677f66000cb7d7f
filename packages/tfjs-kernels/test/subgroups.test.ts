/**
 * The judgement of the subgroup probe's reading and the directive the device wrapper adds: pure,
 * no GPU needed (the probe itself runs in webgpu.test.ts, where CI's lavapipe offers subgroups).
 */
import { describe, expect, it } from 'vitest';
import { subgroupLayoutSize } from '../src/index.js';
import { enableSubgroupDirective, SUBGROUP_MARKER } from '../src/webgpu/subgroups.js';

const lanes = (n: number, size: (i: number) => number, id: (i: number) => number) => ({
  sizes: Array.from({ length: n }, (_, i) => size(i)),
  ids: Array.from({ length: n }, (_, i) => id(i)),
});

describe('subgroupLayoutSize', () => {
  it('accepts contiguous runs of one power-of-two size', () => {
    for (const s of [4, 8, 16, 32, 64, 128]) {
      expect(
        subgroupLayoutSize(
          lanes(
            256,
            () => s,
            (i) => i % s,
          ),
        ),
      ).toBe(s);
    }
  });

  it('refuses interleaved lanes, mixed or odd sizes, and an empty reading', () => {
    // Lanes 0, 2, 4, … in one subgroup of 32 and the odd ones in another.
    expect(
      subgroupLayoutSize(
        lanes(
          256,
          () => 32,
          (i) => Math.floor(i / 2) % 32,
        ),
      ),
    ).toBeNull();
    // Runs that start off the multiples of the size (shifted by one lane).
    expect(
      subgroupLayoutSize(
        lanes(
          256,
          () => 32,
          (i) => (i + 1) % 32,
        ),
      ),
    ).toBeNull();
    // Mixed sizes (a partial subgroup at the end).
    expect(
      subgroupLayoutSize(
        lanes(
          256,
          (i) => (i < 240 ? 32 : 16),
          (i) => i % 32,
        ),
      ),
    ).toBeNull();
    expect(
      subgroupLayoutSize(
        lanes(
          256,
          () => 24,
          (i) => i % 24,
        ),
      ),
    ).toBeNull();
    expect(
      subgroupLayoutSize(
        lanes(
          256,
          () => 2,
          (i) => i % 2,
        ),
      ),
    ).toBeNull();
    expect(subgroupLayoutSize({ sizes: [], ids: [] })).toBeNull();
    expect(subgroupLayoutSize({ sizes: [8, 8], ids: [0] })).toBeNull();
  });
});

describe('enableSubgroupDirective', () => {
  it('puts `enable subgroups;` first in a module that asks for it, and only there', () => {
    const seen: string[] = [];
    const device = {
      createShaderModule(d: { code: string }) {
        seen.push(d.code);
        return {};
      },
    };
    enableSubgroupDirective(device);
    device.createShaderModule({ code: `struct U { a : f32, };\n${SUBGROUP_MARKER}\nfn f() {}` });
    device.createShaderModule({ code: 'fn g() {}' });
    device.createShaderModule({ code: `enable subgroups;\n${SUBGROUP_MARKER}` });
    expect(seen[0]).toMatch(/^enable subgroups;\nstruct U/);
    expect(seen[1]).toBe('fn g() {}');
    expect(seen[2]?.match(/enable subgroups;/g)).toHaveLength(1);
  });
});
