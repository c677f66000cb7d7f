import type { LlamaConfig } from './llama-config.js';

/** Linear layers of a LLaMA decoder layer that LoRA can adapt. */
export type LoraModule =
  | 'q_proj'
  | 'k_proj'
  | 'v_proj'
  | 'o_proj'
  | 'gate_proj'
  | 'up_proj'
  | 'down_proj';

/** All adaptable modules, attention first. */
export const LORA_MODULES: readonly LoraModule[] = Object.freeze([
  'q_proj',
  'k_proj',
  'v_proj',
  'o_proj',
  'gate_proj',
  'up_proj',
  'down_proj',
]);

const SUBBLOCK: Record<LoraModule, 'self_attn' | 'mlp'> = {
  q_proj: 'self_attn',
  k_proj: 'self_attn',
  v_proj: 'self_attn',
  o_proj: 'self_attn',
  gate_proj: 'mlp',
  up_proj: 'mlp',
  down_proj: 'mlp',
};

/** The parts of a PEFT LoRA key. */
export interface PeftKeyParts {
  /** Decoder layer index. */
  layer: number;
  /** Adapted module. */
  module: LoraModule;
  /** `A` (down-projection, [r, in]) or `B` (up-projection, [out, r]). */
  which: 'A' | 'B';
}

/**
 * The exact key PEFT uses in `adapter_model.safetensors`, e.g.
 * `base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight`.
 */
export function peftKey(layer: number, module: string, which: 'A' | 'B'): string {
  if (!Number.isSafeInteger(layer) || layer < 0) {
    throw new RangeError(`peftKey: layer must be a non-negative integer, got ${layer}`);
  }
  const sub = SUBBLOCK[module as LoraModule];
  if (sub === undefined) {
    throw new RangeError(`peftKey: module "${module}" is not one of ${LORA_MODULES.join(', ')}`);
  }
  if (which !== 'A' && which !== 'B') throw new RangeError(`peftKey: which must be "A" or "B"`);
  return `base_model.model.model.layers.${layer}.${sub}.${module}.lora_${which}.weight`;
}

const KEY =
  /^base_model\.model\.model\.layers\.(\d+)\.(self_attn|mlp)\.([a-z_]+)\.lora_([AB])(?:\.default)?\.weight$/;

/**
 * Split a PEFT LoRA key into layer, module and A/B, or return null when it is not one. Keys that
 * still carry the adapter name (`lora_A.default.weight`) are accepted.
 */
export function parsePeftKey(key: string): PeftKeyParts | null {
  const m = KEY.exec(key);
  if (m === null) return null;
  const module = m[3] as LoraModule;
  if (SUBBLOCK[module] !== m[2]) return null;
  const layer = Number(m[1]);
  if (!Number.isSafeInteger(layer)) return null;
  return { layer, module, which: m[4] as 'A' | 'B' };
}

/** Input and output sizes of a module's linear weight ([out, in] in files). */
export function loraModuleShape(
  base: LlamaConfig,
  module: LoraModule,
): { in: number; out: number } {
  const d = base.hidden_size;
  const q = base.num_attention_heads * base.head_dim;
  const kv = base.num_key_value_heads * base.head_dim;
  const f = base.intermediate_size;
  switch (module) {
    case 'q_proj':
      return { in: d, out: q };
    case 'k_proj':
    case 'v_proj':
      return { in: d, out: kv };
    case 'o_proj':
      return { in: q, out: d };
    case 'gate_proj':
    case 'up_proj':
      return { in: d, out: f };
    case 'down_proj':
      return { in: f, out: d };
  }
}
