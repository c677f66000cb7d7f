// The code model's pretraining corpus: DataSciCoding's own prompts, each followed by what the
// model should write after it.
//  - 'initial': the first prompt of an episode (infilling layout, a dataset title and shape)
//    and a build_model body; most bodies run, some hold a typical mistake (code-programs.ts);
//  - 'reflection': the fix-it prompt the environment shows after a failed attempt (the error
//    and the failed body) and a corrected body.
// The titles and shapes are invented: none is the name or the exact shape of a dataset the
// environment evaluates on (the built-in ones and the CSV of the tests), see EVALUATION_SHAPES.
import { createRng, type Rng } from '@poad/envs-core';
import {
  infillPrompt,
  initialPrompt,
  type PromptData,
  reflectionPrompt,
} from '@poad/envs-datascicoding';
import {
  mistake,
  type ProgramContext,
  renderBody,
  validProgram,
  weighted,
} from './code-programs.js';

/** One training sample: the prompt the agent sees and the text it should generate. */
export interface CodeSample {
  kind: 'initial' | 'reflection';
  /** Whether the completion holds a mistake (initial samples only). */
  mistaken: boolean;
  prompt: string;
  completion: string;
}

export interface CodeCorpusOptions {
  seed: number;
  samples: number;
  /** Share of initial samples whose body holds a mistake. */
  mistakeShare: number;
  /** Share of reflection samples. */
  reflectionShare: number;
  /** Share of samples held out for the held-out loss. */
  heldOut: number;
}

export const DEFAULT_CODE_CORPUS: CodeCorpusOptions = {
  seed: 1,
  samples: 40_000,
  mistakeShare: 0.2,
  reflectionShare: 0.25,
  heldOut: 0.02,
};

/** Shapes (rows, features) the environment is evaluated on: never used in the corpus. */
export const EVALUATION_SHAPES: readonly (readonly [number, number])[] = [
  [150, 4], // iris
  [178, 13], // wine
  [569, 30], // breast_cancer
  [1797, 64], // digits
  [600, 10], // apps/train-datascicoding/data/plant_health.csv (text columns label-encoded)
];

/** Dataset titles the environment is evaluated on: never used in the corpus. */
export const EVALUATION_TITLES: readonly string[] = [
  'iris',
  'wine',
  'breast cancer',
  'digits',
  'plant health',
];

/** Invented dataset titles for the prompts. */
export const TITLES: readonly string[] = [
  'customer churn',
  'loan default',
  'credit approval',
  'employee attrition',
  'spam email',
  'fraudulent transactions',
  'bank marketing',
  'hotel booking cancellations',
  'seed varieties',
  'glass types',
  'mushroom edibility',
  'letter recognition',
  'vehicle silhouettes',
  'satellite image',
  'image segmentation',
  'yeast protein localisation',
  'ecoli protein sites',
  'sonar signals',
  'ionosphere radar',
  'banknote authentication',
  'blood transfusion',
  'liver patients',
  'thyroid disease',
  'kidney disease',
  'student performance',
  'website phishing',
  'network intrusion',
  'machine failure',
  'steel plate faults',
  'water potability',
  'air quality level',
  'forest cover type',
  'crop type',
  'bird species',
  'fish species',
  'song genre',
  'movie rating',
  'news topic',
  'game outcome',
  'weather events',
  'particle collisions',
  'star classification',
  'galaxy morphology',
  'handwritten shapes',
  'wearable activity',
  'gesture recognition',
  'vowel sounds',
  'room occupancy',
  'sensor drift',
  'insurance claims',
  'online shoppers',
  'car evaluation',
  'contraceptive method',
  'dermatology',
  'cardiotocography',
  'seismic bumps',
  'wall-following robot',
  'page blocks',
  'optical recognition',
  'shuttle control',
];

function shape(rng: Rng): { n: number; d: number } {
  for (;;) {
    const n = weighted(rng, [
      [rng.int(60, 300), 3],
      [rng.int(300, 1000), 4],
      [rng.int(1000, 3000), 3],
    ] as const);
    const d = weighted(rng, [
      [rng.int(2, 10), 3],
      [rng.int(10, 30), 4],
      [rng.int(30, 90), 3],
    ] as const);
    if (!EVALUATION_SHAPES.some(([a, b]) => a === n && b === d)) return { n, d };
  }
}

/** A prompt's data: an invented title and shape. */
export function promptData(rng: Rng): PromptData {
  return { title: rng.choice(TITLES), ...shape(rng) };
}

/** One sample of `kind`. */
export function codeSample(
  rng: Rng,
  kind: CodeSample['kind'],
  mistakeShare = DEFAULT_CODE_CORPUS.mistakeShare,
): CodeSample {
  const data = promptData(rng);
  const ctx: ProgramContext = { n: data.n, d: data.d };
  if (kind === 'initial') {
    const wrong = rng.float() < mistakeShare ? drawMistake(rng, ctx) : undefined;
    return {
      kind,
      mistaken: wrong !== undefined,
      prompt: infillPrompt(initialPrompt(data)),
      completion: renderBody(wrong ? wrong.wrong : validProgram(rng, ctx)),
    };
  }
  const m = drawMistake(rng, ctx);
  return {
    kind,
    mistaken: false,
    prompt: infillPrompt(reflectionPrompt(data, renderBody(m.wrong), m.error)),
    completion: renderBody(m.fixed),
  };
}

function drawMistake(rng: Rng, ctx: ProgramContext) {
  for (;;) {
    const m = mistake(rng, ctx);
    if (m) return m;
  }
}

/** The corpus, deterministic for a seed: train and held-out samples. */
export function buildCodeCorpus(opts: CodeCorpusOptions = DEFAULT_CODE_CORPUS): {
  train: CodeSample[];
  heldOut: CodeSample[];
} {
  const rng = createRng(opts.seed);
  const samples: CodeSample[] = [];
  for (let i = 0; i < opts.samples; i++) {
    const kind = rng.float() < opts.reflectionShare ? 'reflection' : 'initial';
    samples.push(codeSample(rng, kind, opts.mistakeShare));
  }
  const nHeld = Math.max(1, Math.round(samples.length * opts.heldOut));
  return { heldOut: samples.slice(0, nHeld), train: samples.slice(nHeld) };
}
