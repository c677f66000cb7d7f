import { InputError } from '@poad/config';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCausalLM } from '../src/causal-lm.js';
import { resolveModelConfig } from '../src/config.js';
import { ModelConfigError, ModelInputError } from '../src/errors.js';
import { buildWeights, randomHostTensors, WeightShapeError } from '../src/weights.js';
import { tinyConfig } from './configs.js';
import { useTestBackend } from './helpers.js';

beforeAll(useTestBackend);

describe('bad input', () => {
  it('token ids, ragged batches and empty prompts are rejected with the argument named', async () => {
    const model = createCausalLM(tinyConfig(), { seed: 41, valueHead: { hiddenSizes: [4] } });
    await expect(model.logits([[1, 2], [3]])).rejects.toThrow(/batch\[1\].*length 1 differs/);
    await expect(model.logits([[1, 61]])).rejects.toMatchObject({ input: 'batch[0][1]' });
    await expect(model.logits([[1, 2.5]])).rejects.toBeInstanceOf(ModelInputError);
    await expect(model.logits([])).rejects.toBeInstanceOf(ModelInputError);
    await expect(model.logits([])).rejects.toBeInstanceOf(InputError);
    await expect(model.scoreContinuations([[]], [[[1]]])).rejects.toMatchObject({
      input: 'prompts[0]',
    });
    await expect(model.scoreContinuations([[1]], [[[1], [-1]]])).rejects.toMatchObject({
      input: 'candidatesPerPrompt[0][1][0]',
    });
    await expect(model.scoreContinuations([[1]], [])).rejects.toMatchObject({
      input: 'candidatesPerPrompt',
    });
    await expect(model.scoreTokens([[1]], [[1], [2]])).rejects.toMatchObject({ input: 'actions' });
    await expect(model.generate([1], { temperature: -1 })).rejects.toMatchObject({
      input: 'temperature',
    });
    await expect(model.generate([1], { topP: 0 })).rejects.toMatchObject({ input: 'topP' });
    await expect(model.generate([1], { maxNewTokens: 1.5 })).rejects.toMatchObject({
      input: 'maxNewTokens',
    });
    await expect(model.generateBatch([[1]], { stopCheckEvery: 0 })).rejects.toMatchObject({
      input: 'stopCheckEvery',
    });
    model.valueHead?.dispose();
    model.valueHead = null;
    await expect(model.promptValues([[1]])).rejects.toMatchObject({ input: 'model.valueHead' });
    model.dispose();
    await expect(model.logits([[1]])).rejects.toThrow(/disposed/);
  });

  it('configs are checked field by field', () => {
    expect(() => resolveModelConfig(tinyConfig({ model_type: 'gpt2' }))).toThrow(ModelConfigError);
    expect(() => resolveModelConfig(tinyConfig({ num_key_value_heads: 3 }))).toThrow(
      /num_key_value_heads/,
    );
    expect(() => resolveModelConfig(tinyConfig({ hidden_size: 0 }))).toThrow(/hidden_size/);
    expect(() => resolveModelConfig(tinyConfig({ rope_scaling: { type: 'linear' } }))).toThrow(
      /rope_scaling/,
    );
    expect(() => createCausalLM(tinyConfig(), { lora: { r: 0 } })).toThrow(/lora\.r/);
    expect(() =>
      createCausalLM(tinyConfig(), { lora: { targetModules: ['x_proj' as 'q_proj'] } }),
    ).toThrow(/x_proj/);
    const c = resolveModelConfig(tinyConfig());
    expect(c.numKVHeads).toBe(2);
    expect(c.headDim).toBe(8);
    expect(resolveModelConfig(tinyConfig({ model_type: 'qwen2' })).qkvBias).toBe(true);
  });

  it('weights that do not fit the config name the tensor', () => {
    const c = resolveModelConfig(tinyConfig());
    const host = randomHostTensors(c, 1);
    host.delete('model.layers.1.mlp.up_proj.weight');
    expect(() => buildWeights(c, host)).toThrow(WeightShapeError);
    expect(() => buildWeights(c, host)).toThrow(/model\.layers\.1\.mlp\.up_proj\.weight.*missing/);
    const host2 = randomHostTensors(c, 1);
    host2.set('model.embed_tokens.weight', { shape: [60, 32], data: new Float32Array(60 * 32) });
    expect(() => buildWeights(c, host2)).toThrow(/embed_tokens.*\[60, 32\].*\[61, 32\]/);
  });
});
