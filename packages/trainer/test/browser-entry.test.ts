import { expectBrowserBundle, expectBrowserSubset } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';
import * as browser from '../src/browser.js';
import * as node from '../src/index.js';
import { decodeState, encodeState } from '../src/state-codec.js';

describe('the browser entry', () => {
  it('bundles for a browser, with its dependencies, without any Node built-in', async () => {
    await expectBrowserBundle(new URL('../src/browser.ts', import.meta.url).pathname, [
      '@tensorflow/tfjs-backend-*',
    ]);
  });

  it('is a subset of the Node entry with the same functions', () => {
    expectBrowserSubset(browser, node, {
      present: [
        'algorithmEntry',
        'presetRun',
        'LmPolicy',
        'EtpoLmPolicy',
        'tokenCreditRows',
        'learningCurveSvg',
      ],
      absent: ['train', 'runCli'],
    });
  });

  it('encodes state with its Float32Arrays bit-exactly and refuses other typed arrays', () => {
    const value = { a: 1, w: [Float32Array.from([1.5, -0, Number.MIN_VALUE, 3e38])], s: 'x' };
    const { json, safetensors } = encodeState(value);
    const back = decodeState<typeof value>(json, safetensors);
    expect(back.a).toBe(1);
    expect(back.s).toBe('x');
    expect(new Uint32Array(back.w[0]!.buffer)).toEqual(new Uint32Array(value.w[0]!.buffer));
    expect(() => encodeState({ bad: new Float64Array(2) })).toThrow(/bad is a Float64Array/);
    expect(() =>
      decodeState('{ nope', safetensors, { json: 'x.json', safetensors: 'x.st' }),
    ).toThrow(/x\.json: not valid JSON/);
  });
});
