import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCausalLM, saveCausalLM } from '@poad/lora-model';
import { initBackend } from '@poad/tfjs-kernels';

/**
 * A tiny random LLaMA (2 layers, width 32) with a real byte-level BPE tokenizer trained on a few
 * environment-like sentences, saved as a Hugging Face folder — what the apps load in tests.
 */
export async function tinyModelDir(): Promise<string> {
  const { trainTokenizer } = await import('../../../apps/default-model/src/tokenizer.js');
  await initBackend('wasm');
  const dir = mkdtempSync(join(tmpdir(), 'poad-tiny-model-'));
  const text = join(dir, 'corpus.txt');
  const lines = [
    'You are in the kitchen. walk to the living room',
    'open the microwave and put the pancake in the microwave',
    'pick up the tomato, chop the tomato, take the bowl, serve the dish',
    'turn on the TV, sit on the sofa, take the chips and the milk',
  ];
  writeFileSync(text, Array.from({ length: 50 }, (_, i) => lines[i % lines.length]).join('\n'));
  const tokenizerJson = trainTokenizer([text]);
  const vocab = Object.keys(JSON.parse(tokenizerJson).model.vocab as object).length;
  const model = createCausalLM(
    {
      model_type: 'llama',
      vocab_size: Math.ceil(vocab / 64) * 64,
      hidden_size: 32,
      intermediate_size: 64,
      num_hidden_layers: 2,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      max_position_embeddings: 512,
      rms_norm_eps: 1e-5,
      rope_theta: 10000,
      tie_word_embeddings: true,
      bos_token_id: 1,
      eos_token_id: 2,
    } as Parameters<typeof createCausalLM>[0],
    { seed: 3 },
  );
  await saveCausalLM(model, join(dir, 'model'), { tokenizerJson });
  model.dispose();
  return join(dir, 'model');
}
