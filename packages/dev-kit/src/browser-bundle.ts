import { build } from 'esbuild';
import { expect } from 'vitest';

/**
 * Bundles `entry` (a source file) as a browser would get it: esbuild with `platform: 'browser'`
 * and the `browser` export condition, so workspace packages resolve to their browser entries.
 * Returns esbuild's errors (a Node built-in anywhere in the graph is one: "Could not resolve
 * \"node:fs\"") and the bundle's text. `external` names packages left as imports.
 */
export async function bundleForBrowser(
  entry: string,
  external: string[] = [],
): Promise<{ errors: string[]; code: string }> {
  try {
    const out = await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'esm',
      conditions: ['browser'],
      logLevel: 'silent',
      external,
    });
    return { errors: [], code: out.outputFiles[0]?.text ?? '' };
  } catch (e) {
    const errors = (e as { errors?: { text: string }[] }).errors;
    if (!errors) throw e;
    return { errors: errors.map((x) => x.text), code: '' };
  }
}

/**
 * Bundles `entry` for a browser as {@link bundleForBrowser} does and expects it to bundle, with
 * no import of a Node built-in left in it; returns the bundle's text.
 */
export async function expectBrowserBundle(entry: string, external: string[] = []): Promise<string> {
  const { errors, code } = await bundleForBrowser(entry, external);
  expect(errors).toEqual([]);
  expect(code).not.toMatch(/from ["'](node:)?(fs|path|os|child_process)(\/promises)?["']/);
  return code;
}

/**
 * Expects a browser entry to be a part of its package's Node entry: every name `browser` exports,
 * `node` exports as the very same value; the names in `present` are among them, those in
 * `absent` (the Node-only parts) are not. Returns the browser entry's names.
 */
export function expectBrowserSubset(
  browser: object,
  node: object,
  names: { present?: readonly string[]; absent?: readonly string[] } = {},
): string[] {
  const exported = Object.keys(browser);
  for (const name of exported) {
    expect((node as Record<string, unknown>)[name], name).toBe(
      (browser as Record<string, unknown>)[name],
    );
  }
  for (const name of names.present ?? []) expect(exported).toContain(name);
  for (const name of names.absent ?? []) expect(exported).not.toContain(name);
  return exported;
}
