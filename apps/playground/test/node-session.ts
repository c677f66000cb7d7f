import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultModelPath } from '@poad/default-model';
import { type CausalLM, causalLMFromFiles } from '@poad/lora-model';
import { initBackend } from '@poad/tfjs-kernels';
import { Session, type SessionSettings } from '../src/session.js';

/** The embedded default model from its files' bytes, as the page builds it (same tokenizer). */
export async function defaultModelFromFiles(
  o: Parameters<Parameters<typeof Session.create>[1]>[0],
): Promise<CausalLM> {
  const file = (f: string) => readFileSync(join(defaultModelPath, f));
  return causalLMFromFiles(
    {
      config: file('config.json').toString('utf8'),
      weights: new Uint8Array(file('model.safetensors')),
      tokenizer: file('tokenizer.json').toString('utf8'),
    },
    o,
  );
}

/**
 * The page's session in this Node process, on tfjs wasm with one thread and without
 * `@poad/tfjs-native`'s kernels: the same kernels a browser runs.
 */
export async function nodeSession(
  settings: SessionSettings,
): Promise<{ session: Session; backend: string }> {
  process.env.POAD_NATIVE_KERNELS = '0';
  const info = await initBackend('wasm', { threads: 1 });
  return {
    session: await Session.create(settings, defaultModelFromFiles),
    backend: info.description,
  };
}
