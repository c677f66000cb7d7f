import type { OptionsSchema } from '@poad/run-kit';

/**
 * Every option of a training command. Training hyper-parameters left unset come from the preset
 * of the chosen environment family, algorithm and `--preset` (see presets.ts), then a config
 * file, then the command line.
 */
export function trainingSchema(
  tasks: readonly string[],
  defaultTask: string,
  taskLabel = 'Task',
  defaultModel = 'default',
  defaultEvalEpisodes = 100,
) {
  return {
    task: {
      type: 'enum',
      choices: tasks,
      default: defaultTask,
      description: `${taskLabel} to train on`,
    },
    algo: {
      type: 'enum',
      choices: ['poad', 'ntpo', 'twosome', 'archer', 'etpo'],
      default: 'poad',
      description:
        'Algorithm: poad (BAD token credit), ntpo (tokens as steps), twosome (action level), archer, etpo (token-level soft Q-learning on the soft BAD backup, KL-regularised towards a reference)',
    },
    preset: {
      type: 'enum',
      choices: ['small', 'paper'],
      default: 'small',
      description:
        "Hyper-parameter preset: 'small' is tuned for the embedded default model, 'paper' is the paper's values for 7B models",
    },
    seed: {
      type: 'integer',
      default: 1,
      min: 0,
      description: 'Seed of every random choice (envs, sampling, init, minibatches)',
    },
    model: {
      type: 'string',
      default: defaultModel,
      placeholder: 'dir',
      description:
        "Hugging Face model folder (config.json, model.safetensors, tokenizer.json); 'default' is the embedded default model, 'default-code' its code model for DataSciCoding, 'informative-prior' its variant with common sense in the corpus (@poad/default-model)",
    },
    backend: {
      type: 'enum',
      choices: ['auto', 'webgpu', 'tensorflow', 'wasm', 'cpu'],
      default: 'auto',
      description:
        'TF.js backend: auto prefers tfjs-node-gpu, a hardware GPU through WebGPU (Dawn), tfjs-node, then wasm (+ native kernels), then cpu; webgpu fails before any work when no GPU adapter is usable (POAD_WEBGPU_ALLOW_SOFTWARE=1 accepts a software one)',
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
    numSteps: {
      type: 'integer',
      min: 1,
      description: 'Rollout length T per environment per iteration',
    },
    lr: { type: 'number', min: 0, max: 1, description: 'Actor (LoRA) learning rate, AdamW' },
    criticLr: {
      type: 'number',
      min: 0,
      max: 1,
      description: 'Critic (value head) learning rate, Adam',
    },
    epochs: { type: 'integer', min: 1, description: 'PPO epochs per rollout' },
    minibatches: { type: 'integer', min: 1, description: 'Minibatches per epoch' },
    gradAccumulation: {
      type: 'integer',
      min: 1,
      description: 'Gradient-accumulation chunks per minibatch',
    },
    gamma: { type: 'number', min: 0, max: 1, description: 'Discount γ between actions' },
    lambda: { type: 'number', min: 0, max: 1, description: 'GAE λ' },
    intraGamma: {
      type: 'number',
      optional: true,
      min: 0,
      max: 1,
      description: 'NTPO intra-action discount γ_w (unset: γ); ignored by poad/archer/twosome',
    },
    advantageNormalisation: {
      type: 'string',
      optional: true,
      placeholder: 'mode',
      description:
        "How a minibatch's advantages are standardised: masked (over real tokens, the default), nan-trick (the POAD code's), none, or chunk:N (the TWOSOME code's: each N consecutive samples on their own, unbiased σ)",
    },
    intraLambda: {
      type: 'number',
      optional: true,
      min: 0,
      max: 1,
      description:
        "GAE λ between the tokens of one action, λ_w (unset: λ); 1 gives an action's first token the action-level GAE (TWOSOME's weight); poad/ntpo/archer",
    },
    entropyCoef: { type: 'number', min: 0, description: 'Entropy bonus coefficient' },
    clip: {
      type: 'number',
      min: 0,
      max: 10,
      description: 'PPO ratio clip ε (also the value clip)',
    },
    targetKl: {
      type: 'number',
      min: 0,
      description: 'Approximate-KL threshold that skips an actor step (0 = off)',
    },
    beta: {
      type: 'number',
      optional: true,
      min: 1e-6,
      description:
        'ETPO: β, the weight of KL(π ‖ π̄) in the soft backup and the policy loss; ignored by the PPO algorithms',
    },
    tau: {
      type: 'number',
      optional: true,
      min: 1e-6,
      max: 1,
      description:
        'ETPO: τ of the target critic, a Polyak average of the critic adapter updated after every critic step',
    },
    reference: {
      type: 'enum',
      optional: true,
      choices: ['base', 'uniform'],
      description:
        'ETPO: the reference policy π̄ of the KL term: the base model with its adapters off, or uniform (plain entropy regularisation)',
    },
    optimizer: {
      type: 'enum',
      optional: true,
      choices: ['adamw', 'lion'],
      description:
        "ETPO: optimiser of actor and critic; 'lion' is the ETPO authors' choice (sign updates: use a 3–10× smaller lr). The PPO algorithms use AdamW",
    },
    candidateNormalisation: {
      type: 'enum',
      choices: ['words', 'tokens', 'none'],
      description:
        'TWOSOME sampler: divide a candidate log-prob by its word count, token count, or nothing',
    },
    tokenSpace: {
      type: 'enum',
      choices: ['vocabulary', 'labels'],
      description:
        "Token policy of poad/ntpo/archer: 'vocabulary' scores tokens over the whole vocabulary and samples labels by the TWOSOME softmax (the paper); 'labels' renormalises each token over the tokens that continue a valid label and samples labels from the product; ignored by twosome",
    },
    maxNewTokens: {
      type: 'integer',
      min: 1,
      max: 2048,
      description: 'Open action spaces: most tokens generated per action (stops early at EOS)',
    },
    temperature: {
      type: 'number',
      min: 0.001,
      description: 'Open action spaces: sampling temperature (stored log-probs use temperature 1)',
    },
    topK: {
      type: 'integer',
      min: 0,
      description: 'Open action spaces: sample among the k most likely tokens (0 = all)',
    },
    truncationAsTermination: {
      type: 'boolean',
      default: false,
      description:
        'Treat step-limit truncation as termination (the original code) instead of bootstrapping',
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
    maxNonFiniteSkips: {
      type: 'integer',
      default: 8,
      min: 1,
      max: 1_000_000,
      description:
        'A minibatch whose loss or gradient norm is NaN/Inf skips its optimiser step (weights untouched); after this many in a row the run stops with exit code 3, its latest checkpoint being the last good one',
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
      default: defaultEvalEpisodes,
      min: 0,
      description:
        'Episodes per evaluated task at the end of training and in eval mode (0 skips it)',
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
  } satisfies OptionsSchema;
}

export type TrainingSchema = ReturnType<typeof trainingSchema>;
