// Test-only: a small random LLaMA checkpoint as the files of a Hub repository.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeCheckpoint } from '../src/checkpoint.js';
import { randomTensors, tinyConfig, withTempDir } from './test-helpers.js';

/** Files of a sharded model (three safetensors shards of ~140 kB) plus the usual extras. */
export async function hubModelFiles(
  overrides: Record<string, unknown> = {},
): Promise<Record<string, Uint8Array | string>> {
  const config = tinyConfig({
    vocab_size: 256,
    hidden_size: 64,
    intermediate_size: 128,
    num_attention_heads: 4,
    num_key_value_heads: 2,
  });
  const files: Record<string, Uint8Array | string> = {};
  await withTempDir(async (dir) => {
    await writeCheckpoint(dir, config, randomTensors(config, 11), { maxShardBytes: 200_000 });
    for (const f of await readdir(dir)) files[f] = new Uint8Array(await readFile(join(dir, f)));
  });
  if (Object.keys(overrides).length > 0) {
    const json = JSON.parse(new TextDecoder().decode(files['config.json'] as Uint8Array));
    files['config.json'] = `${JSON.stringify({ ...json, ...overrides }, null, 2)}\n`;
  }
  files['tokenizer_config.json'] = JSON.stringify({
    bos_token: '<s>',
    eos_token: '</s>',
    chat_template:
      "{% for m in messages %}{{ '<|' + m['role'] + '|>' + m['content'] + eos_token }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}",
  });
  files['generation_config.json'] = JSON.stringify({ bos_token_id: 1, eos_token_id: 2 });
  files['README.md'] = '# a test model\n';
  files['.gitattributes'] = '*.safetensors filter=lfs diff=lfs merge=lfs -text\n';
  files['pytorch_model.bin'] = new Uint8Array(50_000).fill(7);
  files['onnx/model.onnx'] = new Uint8Array(1000).fill(3);
  return files;
}
