/**
 * `@poad/lora-model` in a browser (the package's `browser` export condition): everything of the
 * Node entry that needs no Node built-ins, and {@link loadCausalLM} reading a model folder served
 * over HTTP. The backend comes from `@poad/tfjs-kernels`' browser entry.
 */

import { CheckpointError } from '@poad/hf-files';
import type { CausalLM, CausalLMOptions } from './causal-lm.js';
import { causalLMFromFiles } from './model-files.js';

export * from './core.js';

/** Options of the browser {@link loadCausalLM}. */
export interface LoadCausalLMOptions extends Omit<CausalLMOptions, 'initStd'> {
  /** Load `tokenizer.json` (when served) into `model.tokenizer`. Default true. */
  tokenizer?: boolean;
  /**
   * Fetch `tokenizer_config.json` for the special token names (default true; a 404 is fine, but
   * browsers log it: pass false for a folder known to have none).
   */
  tokenizerConfig?: boolean;
  /** The fetch to use (default `globalThis.fetch`). */
  fetch?: typeof fetch;
}

async function get(f: typeof fetch, url: string, optional: boolean): Promise<Response | null> {
  let res: Response;
  try {
    res = await f(url);
  } catch (cause) {
    throw new CheckpointError(
      'missing_file',
      url,
      `could not be fetched (${(cause as Error).message})`,
      undefined,
      { cause },
    );
  }
  // A missing optional file: 404, or a development server's HTML fallback page.
  const html = (res.headers.get('content-type') ?? '').includes('text/html');
  if (optional && (res.status === 404 || (res.ok && html))) return null;
  if (!res.ok) {
    throw new CheckpointError(
      'missing_file',
      url,
      `could not be fetched (HTTP ${res.status} ${res.statusText})`,
    );
  }
  return res;
}

/**
 * Load a Hugging Face LLaMA-family model folder served over HTTP: `config.json`,
 * `model.safetensors` and, when served, `tokenizer.json` and `tokenizer_config.json` under the
 * URL `base` (relative URLs resolve against the page or worker). The same checks as in Node;
 * errors are `CheckpointError`s naming the URL.
 */
export async function loadCausalLM(
  base: string,
  options: LoadCausalLMOptions = {},
): Promise<CausalLM> {
  const f = options.fetch ?? globalThis.fetch.bind(globalThis);
  const root = base.endsWith('/') ? base : `${base}/`;
  // Fetched together; a failure is reported for the first file in this order, whatever finished first.
  const settled = await Promise.allSettled([
    get(f, `${root}config.json`, false).then((r) => r!.text()),
    get(f, `${root}model.safetensors`, false).then(
      async (r) => new Uint8Array(await r!.arrayBuffer()),
    ),
    options.tokenizer === false
      ? null
      : get(f, `${root}tokenizer.json`, true).then((r) => r?.text() ?? null),
    options.tokenizer === false || options.tokenizerConfig === false
      ? null
      : get(f, `${root}tokenizer_config.json`, true).then((r) => r?.text() ?? null),
  ]);
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  const [config, weights, tokenizer, tokenizerConfig] = settled.map(
    (r) => (r as PromiseFulfilledResult<unknown>).value,
  ) as [string, Uint8Array, string | null, string | null];
  const { tokenizer: _t, tokenizerConfig: _c, fetch: _f, ...modelOptions } = options;
  return causalLMFromFiles(
    {
      config,
      weights,
      ...(tokenizer === null ? {} : { tokenizer }),
      ...(tokenizerConfig === null ? {} : { tokenizerConfig }),
      source: root.slice(0, -1),
    },
    modelOptions,
  );
}
