import { describe, expect, it } from 'vitest';
import { noNodeBuiltins } from '../vite-plugins.js';

describe('noNodeBuiltins', () => {
  const plugin = noNodeBuiltins();
  const resolve = (id: string, importer: string) =>
    (plugin.resolveId as (this: unknown, id: string, importer: string) => unknown).call(
      {
        error(message: string): never {
          throw new Error(message);
        },
      },
      id,
      importer,
    );

  it("fails the build when the project's browser code imports a Node built-in", () => {
    expect(() => resolve('node:fs', '/repo/packages/trainer/dist/chunk-X.js')).toThrow(
      /packages\/trainer\/dist\/chunk-X\.js imports the Node built-in "node:fs"/,
    );
    expect(() => resolve('path', '/repo/apps/playground/src/main.ts')).toThrow(/"path"/);
  });

  it('leaves other imports and third-party code to the bundler', () => {
    expect(resolve('@poad/trainer', '/repo/apps/playground/src/main.ts')).toBeNull();
    expect(
      resolve('fs', '/repo/node_modules/@tensorflow/tfjs-backend-wasm/wasm-out/x.js'),
    ).toBeNull();
  });
});
