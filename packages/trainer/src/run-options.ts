import { defineSchema, type OptionsSchema, type OptionValues } from '@poad/config';
import { WEIGHT_DTYPES } from '@poad/lora-model';
import type { AppSpec } from './app.js';
import { KEEP_BEST_PATTERN } from './keep-best.js';
import { PROMPT_DATE, PROMPT_FORMATS } from './prompt-format.js';

/**
 * The options of a run that are not an algorithm's config: what to train on, with which model and
 * backend, how long, and where the output goes. With the chosen algorithm's `configSchema` and the
 * environment's own options they make a training command's flags. `task`, `algo` and `preset`
 * take their choices from the environment ({@link runOptionsSchema}).
 */
/** The `matmul` run option: how products with frozen float32 weights run on webgpu. */
export const MATMUL_CHOICES = ['auto', 'tfjs', 'tiled'] as const;
export type MatMulOption = (typeof MATMUL_CHOICES)[number];

export const RUN_OPTIONS = defineSchema({
  task: { type: 'string', description: 'Task to train on' },
  algo: { type: 'string', default: 'poad', description: 'Algorithm' },
  preset: { type: 'string', description: 'Hyper-parameter preset of the environment' },
  model: {
    type: 'string',
    default: 'default',
    placeholder: 'id|dir',
    description:
      "A Hugging Face Hub model ORG/NAME or ORG/NAME@REVISION (downloaded once into the cache Python's huggingface_hub shares: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub; HF_TOKEN for gated models, HF_ENDPOINT for a mirror, HF_HUB_OFFLINE=1 for the cache only; environment.json records the commit, which --resume loads again), a model folder (config.json, model.safetensors, tokenizer.json; an existing folder wins over a Hub id), or an embedded model: 'default' the default model, 'default-code' its code model for DataSciCoding, 'informative-prior' its variant with common sense in the corpus (@poad/default-model)",
  },
  promptFormat: {
    type: 'enum',
    choices: PROMPT_FORMATS,
    default: 'auto',
    description:
      "How an observation becomes the prompt: plain is BOS + the observation, action labels continuing it after a space (the embedded models); chat is the observation as the user message of the model's chat template (tokenizer_config.json or chat_template.jinja), the labels or generated text as the assistant's reply; auto is chat when the model has a chat template, else plain. config.json records the format used, and --resume keeps it",
  },
  promptDate: {
    type: 'string',
    optional: true,
    placeholder: 'YYYY-MM-DD',
    pattern: PROMPT_DATE,
    expected: 'a date YYYY-MM-DD',
    description:
      "The date a chat template writes into the prompt (Llama 3.x puts today's date in its system turn); default: the day the run starts, recorded in config.json so that --resume renders the same prompts",
  },
  backend: {
    type: 'enum',
    choices: ['auto', 'webgpu', 'tensorflow', 'wasm', 'cpu'],
    default: 'auto',
    description:
      'TF.js backend: auto prefers tfjs-node-gpu, a hardware GPU through WebGPU (Dawn), tfjs-node, then wasm (+ native kernels), then cpu; webgpu fails before any work when no GPU adapter is usable (POAD_WEBGPU_ALLOW_SOFTWARE=1 accepts a software one)',
  },
  weightDtype: {
    type: 'enum',
    choices: WEIGHT_DTYPES,
    default: 'auto',
    description:
      "Storage of the model's frozen weights: auto keeps a bf16/f16 checkpoint in 16 bits on webgpu (half the memory, unpacked inside the kernels, float32 accumulation) and float32 on CPU backends; float32 always converts; bfloat16/float16 ask for that storage (webgpu only; a float32 checkpoint is rounded)",
  },
  matmul: {
    type: 'enum',
    choices: MATMUL_CHOICES,
    default: 'auto',
    description:
      "Products with frozen float32 weights on webgpu: auto times TF.js's matmul against the tiled program (64 × 64 tiles, subgroups) per weight shape and row count on the GPU and runs whichever is faster (the plan is cached per GPU and model shapes under $POAD_CACHE_DIR, else ~/.cache/poad, recorded in environment.json and reused by --resume; a software adapter keeps TF.js's); tfjs and tiled fix the choice. Weights kept in 16 bits always run tiled; CPU backends ignore it",
  },
  threads: {
    type: 'integer',
    min: 1,
    max: 1024,
    description:
      'CPU threads of the native kernels on wasm (default: $POAD_NATIVE_THREADS, else the CPU count); the last bits of the results depend on it, so a run records it and --resume keeps it',
  },
  envs: { type: 'integer', min: 1, max: 256, description: 'Parallel environments N' },
  envSteps: {
    type: 'integer',
    min: 1,
    description: 'Total environment steps of the run (iterations = env-steps / (N·T))',
  },
  loraRank: {
    type: 'integer',
    default: 8,
    min: 1,
    description: 'LoRA rank r (targets q_proj and v_proj)',
  },
  loraAlpha: { type: 'number', default: 16, min: 0, description: 'LoRA alpha' },
  runs: {
    type: 'string',
    default: 'runs',
    placeholder: 'dir',
    description: 'Folder that holds run directories',
  },
  runName: {
    type: 'string',
    optional: true,
    placeholder: 'name',
    description: 'Run directory name (unset: <env>-<task>-<algo>-s<seed>-<timestamp>)',
  },
  resume: {
    type: 'string',
    optional: true,
    placeholder: 'run-dir',
    description: 'Continue a run from its latest checkpoint, bit for bit',
  },
  checkpointEvery: {
    type: 'integer',
    default: 1,
    min: 1,
    description:
      'Save a checkpoint every N iterations and at the end (1: a hard kill loses at most one iteration)',
  },
  evalEpisodes: {
    type: 'integer',
    default: 100,
    min: 0,
    description: 'Episodes per evaluated task at the end of training and in eval mode (0 skips it)',
  },
  perplexityLines: {
    type: 'integer',
    optional: true,
    min: 0,
    description:
      "Held-out texts the model's perplexity is measured on before and after training (perplexity.json): the first N (default: all of them, the embedded models' 200 held-out lines or a model folder's heldout.jsonl); 0 skips both passes, which on a large model or a slow device take longer than a short run",
  },
  evalEvery: {
    type: 'integer',
    default: 0,
    min: 0,
    description: 'Greedy evaluation every N iterations during training (0 = only at the end)',
  },
  maxIterations: {
    type: 'integer',
    optional: true,
    min: 1,
    description: 'Stop after this many iterations (smoke tests); default: from env-steps',
  },
  quiet: { type: 'boolean', default: false, description: 'No progress bar' },
  checkpoint: {
    type: 'string',
    default: 'latest',
    placeholder: 'latest|best|iter-N',
    pattern: /^(latest|best|iter-[0-9]+)$/,
    expected: 'latest, best or iter-N (e.g. iter-40)',
    description:
      'The checkpoint of --resume RUN_DIR that eval and play load: latest (falling back to the one before when it is damaged), best (kept by --keep-best) or iter-N',
  },
  keepBest: {
    type: 'string',
    optional: true,
    placeholder: 'metric:max|min[@k]',
    pattern: KEEP_BEST_PATTERN,
    expected: 'METRIC:max|min[@K], e.g. meanReward:max or successRate:max@5',
    description:
      "Keep the best checkpoint (checkpoints/best/, besides the last two) by a metrics field and its direction, averaged over the last K iterations that have it (ties keep the earlier); greedySuccess:max judges the greedy evaluations of --eval-every. eval, play and compare take it with --checkpoint best; the final evaluation reports it beside the latest. Unset: the environment's preset's, else none",
  },
  onCollapse: {
    type: 'enum',
    choices: ['warn', 'stop', 'rollback'],
    default: 'warn',
    description:
      "What the collapse monitor does when it fires (the --keep-best metric's average more than --collapse-drop below its best, a --collapse-floors floor broken, or the KL guard skipping more than --max-kl-skip-share of the minibatches, each for --collapse-patience iterations in a row): warn says so in the progress line and the metrics row; stop ends the run there; rollback restores the best checkpoint's whole trainer state (weights, optimisers, generator), cuts the learning rates by --rollback-lr-factor and continues (environment steps are not rewound), at most --max-rollbacks times, then stops",
  },
  collapseDrop: {
    type: 'number',
    default: 0.5,
    min: 0,
    description:
      "How far (in the --keep-best metric's units) its average may fall below its best before the iteration counts towards a collapse",
  },
  collapsePatience: {
    type: 'integer',
    default: 10,
    min: 1,
    description: 'Iterations in a row a collapse check must hold before the monitor fires',
  },
  collapseFloors: {
    type: 'string',
    optional: true,
    placeholder: 'field:min,…',
    pattern: /^([A-Za-z][A-Za-z0-9]*:-?[0-9.]+)(,[A-Za-z][A-Za-z0-9]*:-?[0-9.]+)*$/,
    expected: 'FIELD:MIN[,FIELD:MIN…], e.g. labelMass:0.2,programsRun:0.5',
    description:
      "Floors of metrics fields the monitor watches (labelMass: the probability mass on the valid labels; programsRun: the share of programs that ran); unset: the preset's, else none",
  },
  maxKlSkipShare: {
    type: 'number',
    default: 0.9,
    min: 0,
    max: 1,
    description:
      "The share of an iteration's minibatches the approximate-KL guard may skip before the iteration counts towards a collapse (1: never)",
  },
  rollbackLrFactor: {
    type: 'number',
    default: 0.5,
    min: 0,
    max: 1,
    description: 'What a rollback multiplies the learning rates by (--on-collapse rollback)',
  },
  maxRollbacks: {
    type: 'integer',
    default: 2,
    min: 0,
    description: 'Rollbacks a run may make; the collapse after the last one stops it',
  },
});

/** A run's own options, resolved (see {@link RUN_OPTIONS}). */
export type RunOptions = OptionValues<typeof RUN_OPTIONS>;

/**
 * The run options of an environment's runs: `task`, `algo` and `preset` choose among its tasks,
 * the algorithms its presets offer and its presets.
 */
export function runOptionsSchema(spec: AppSpec, algorithms: readonly string[]): OptionsSchema {
  const label = spec.taskOption
    ? spec.taskOption[0]!.toUpperCase() + spec.taskOption.slice(1)
    : 'Task';
  const presets = spec.presets;
  return {
    ...RUN_OPTIONS,
    task: {
      type: 'enum',
      choices: spec.tasks,
      default: spec.defaultTask,
      description: `${label} to train on`,
    },
    algo: {
      type: 'enum',
      choices: algorithms,
      default: algorithms.includes('poad') ? 'poad' : algorithms[0]!,
      description: `Algorithm (each one's options: --algo NAME --help)`,
    },
    preset: {
      type: 'enum',
      choices: Object.keys(presets.presets),
      default: presets.default,
      description: `Hyper-parameter preset: ${Object.entries(presets.presets)
        .map(([name, p]) => `'${name}' (${p.source.replace(/^\w+: /, '')})`)
        .join('; ')}`,
    },
  };
}
