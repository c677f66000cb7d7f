/**
 * An agent's trainable parts on disk, in standard formats: the actor's LoRA adapter (PEFT) in a
 * checkpoint folder, the value head beside it when the algorithm has one, and the algorithm's
 * other adapters (e.g. ETPO's critic and target critic) in subfolders named by the algorithm.
 * Saving, loading, and checking a folder without loading it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ADAPTER_FILES, readPeftAdapter, readSafetensorsFile } from '@poad/hf-files';
import {
  type CausalLM,
  type LoraAdapter,
  llamaConfigOf,
  loadAdapter,
  loadValueHead,
  readAdapter,
  saveAdapter,
  saveValueHead,
  VALUE_HEAD_FILE,
} from '@poad/lora-model';
import { withGpuPhase } from '@poad/tfjs-kernels';

/** What a checkpoint folder holds besides the actor's adapter. */
export interface TrainableParts {
  /** Whether the model has a value head (PPO's critic). */
  readonly valueHead: boolean;
  /** Adapters saved in subfolders beside the actor's, by subfolder. */
  readonly adapters: readonly (readonly [string, LoraAdapter])[];
}

/** Writes the actor's adapter, the other adapters and the value head into `dir`. */
export async function saveTrainable(
  model: CausalLM,
  parts: TrainableParts,
  dir: string,
): Promise<void> {
  mkdirSync(dir, { recursive: true });
  // Counted as checkpoint work on webgpu (gpuCounters).
  await withGpuPhase('checkpoint', async () => {
    await saveAdapter(model, dir);
    for (const [sub, adapter] of parts.adapters)
      await saveAdapter(model, join(dir, sub), { adapter });
    if (parts.valueHead) await saveValueHead(model, dir);
  });
}

/**
 * Loads what {@link saveTrainable} wrote: the actor's adapter and value head into the model, the
 * other adapters' weights into the adapters the policy holds (the same variable objects).
 */
export async function loadTrainable(
  model: CausalLM,
  parts: TrainableParts,
  dir: string,
): Promise<void> {
  await loadAdapter(model, dir);
  if (parts.valueHead) await loadValueHead(model, dir);
  for (const [sub, adapter] of parts.adapters) await loadInto(model, join(dir, sub), sub, adapter);
}

/** Copies the adapter saved in `folder` into `adapter`, refusing one of another shape. */
async function loadInto(
  model: CausalLM,
  folder: string,
  sub: string,
  adapter: LoraAdapter,
): Promise<void> {
  const read = await readAdapter(model, folder);
  try {
    const from = read.variables();
    const to = adapter.variables();
    if (from.length !== to.length || from.some((v, i) => v.shape.join() !== to[i]!.shape.join()))
      throw new Error(
        `${folder}: the adapter does not match this run's ${sub} adapter (rank or target modules differ)`,
      );
    to.forEach((v, i) => {
      v.assign(from[i]!);
    });
  } finally {
    read.dispose();
  }
}

/**
 * Reads every file {@link saveTrainable} writes without attaching it: throws, naming the file,
 * when one is missing, unreadable, does not fit the model, or holds a NaN or ±∞.
 */
export async function checkTrainable(
  model: CausalLM,
  parts: TrainableParts,
  dir: string,
): Promise<void> {
  const baseConfig = llamaConfigOf(model);
  const adapter = await readPeftAdapter(dir, { baseConfig });
  const files: [string, Map<string, { data: Float32Array }>][] = [
    [join(dir, ADAPTER_FILES.weights), adapter.tensors],
  ];
  for (const [sub] of parts.adapters) {
    const extra = await readPeftAdapter(join(dir, sub), { baseConfig });
    files.push([join(dir, sub, ADAPTER_FILES.weights), extra.tensors]);
  }
  if (parts.valueHead) {
    const head = await readSafetensorsFile(join(dir, VALUE_HEAD_FILE));
    files.push([join(dir, VALUE_HEAD_FILE), head.tensors]);
  }
  for (const [file, tensors] of files) {
    for (const [name, t] of tensors) {
      if (!t.data.every(Number.isFinite)) {
        throw new Error(`${file}: tensor ${name} holds a NaN or an infinity`);
      }
    }
  }
}
