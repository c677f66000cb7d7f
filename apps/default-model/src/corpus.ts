// Generates the default model's pretraining corpus:
//  - random play in every VirtualHome task/variant and both Overcooked tasks: each line is an
//    observation followed by one valid action label chosen uniformly at random, exactly the
//    text layout the agent scores ("<observation> <action>"), so the model learns the words
//    and the format but nothing about which action is good;
//  - plain descriptive sentences about rooms, objects and cooking (descriptions.ts);
//  - for the informative-prior variant only, procedural common sense (common-sense.ts).
// Lines are de-duplicated, shuffled and split into train and held-out files.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createRng, type TextEnv } from '@poad/envs-core';
import { createOvercookedEnv, OVERCOOKED_TASKS } from '@poad/envs-overcooked';
import { createVirtualHomeEnv, VIRTUALHOME_TASKS } from '@poad/envs-virtualhome';
import { commonSenseText, layoutDemonstrations } from './common-sense.js';
import { descriptiveText } from './descriptions.js';

export interface CorpusOptions {
  seed: number;
  /** Random-play episodes per environment. */
  episodes: number;
  /** Descriptive sentences. */
  sentences: number;
  /**
   * Lines of procedural common sense (common-sense.ts): 0 for the default model, more for the
   * informative-prior variant.
   */
  commonSense?: number;
  /**
   * Episodes of demonstrations in the environment's layout on foods and appliances no task uses
   * (common-sense.ts `layoutDemonstrations`): 0 for the default model.
   */
  demonstrations?: number;
  /** Fraction of lines held out for perplexity. */
  heldOut: number;
}

/** Common-sense lines of the informative-prior variant (as many as descriptive sentences). */
export const INFORMATIVE_COMMON_SENSE = 20_000;

/** Demonstration episodes of the informative-prior variant (layoutDemonstrations). */
export const INFORMATIVE_DEMONSTRATIONS = 400;

export const DEFAULT_CORPUS: CorpusOptions = {
  seed: 1,
  episodes: 60,
  sentences: 20_000,
  heldOut: 0.05,
};

async function randomPlay(env: TextEnv, episodes: number, seed: number): Promise<string[]> {
  const rng = createRng(seed);
  const lines: string[] = [];
  for (let e = 0; e < episodes; e++) {
    let step = await env.reset({ seed: seed * 1000 + e });
    for (let t = 0; t < 200 && !(step.terminated || step.truncated); t++) {
      const actions = step.actions;
      if (!actions || actions.length === 0) break;
      const action = rng.choice(actions);
      lines.push(`${step.observation} ${action}`);
      step = await env.step(action);
    }
  }
  await env.close();
  return lines;
}

/** Builds the corpus lines (train and held-out), deterministic for a seed. */
export async function buildCorpus(
  opts: CorpusOptions = DEFAULT_CORPUS,
): Promise<{ train: string[]; heldOut: string[] }> {
  const lines: string[] = [];
  let k = 0;
  for (const task of VIRTUALHOME_TASKS) {
    lines.push(...(await randomPlay(createVirtualHomeEnv(task), opts.episodes, opts.seed + ++k)));
  }
  for (const task of Object.keys(OVERCOOKED_TASKS)) {
    lines.push(
      ...(await randomPlay(createOvercookedEnv(task as never), opts.episodes, opts.seed + ++k)),
    );
  }
  const rng = createRng(opts.seed);
  lines.push(...descriptiveText(rng, opts.sentences));
  // Drawn after the descriptions, so the default model's corpus is unchanged by this option.
  if (opts.commonSense) lines.push(...commonSenseText(rng, opts.commonSense));
  const demos = opts.demonstrations
    ? await layoutDemonstrations(rng, opts.demonstrations, createVirtualHomeEnv('food-preparation'))
    : [];
  lines.push(...demos);
  const unique = [...new Set(lines.map((l) => l.replace(/\s+/g, ' ').trim()))].filter(Boolean);
  shuffle(unique, rng);
  const nHeld = Math.max(1, Math.round(unique.length * opts.heldOut));
  const heldOut = unique.slice(0, nHeld);
  const train = unique.slice(nHeld);
  if (demos.length > 0) {
    // Demonstrations keep how often play visits each state (the common states many times), as a
    // text seen again and again would; only those whose line is in the training split.
    const inTrain = new Set(train);
    const seen = new Set<string>();
    for (const d of demos) {
      if (!inTrain.has(d)) continue;
      if (seen.has(d)) train.push(d);
      else seen.add(d);
    }
    shuffle(train, rng);
  }
  return { heldOut, train };
}

function shuffle(xs: string[], rng: ReturnType<typeof createRng>): void {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = resolve(process.argv[2] ?? 'build/corpus');
  mkdirSync(out, { recursive: true });
  const { train, heldOut } = await buildCorpus();
  writeFileSync(join(out, 'train.txt'), `${train.join('\n')}\n`);
  writeFileSync(join(out, 'heldout.txt'), `${heldOut.join('\n')}\n`);
  const chars = train.reduce((s, l) => s + l.length + 1, 0);
  console.log(
    `corpus: ${train.length} train lines (${(chars / 1e6).toFixed(2)} MB), ${heldOut.length} held-out lines -> ${out}`,
  );
}
