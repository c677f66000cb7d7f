import { type EpisodeStats, makeVecEnv, type TextEnv, type VecEnvState } from '@poad/envs-core';
import {
  createOvercookedEnv,
  OVERCOOKED_PRESETS,
  type OvercookedTaskName,
} from '@poad/envs-overcooked';
import {
  createVirtualHomeEnv,
  VIRTUALHOME_PRESETS,
  type VirtualHomeTask,
} from '@poad/envs-virtualhome';
import type { CausalLM } from '@poad/lora-model';
import { adapterFiles, valueHeadFile } from '@poad/lora-model';
import type { TokenPolicy } from '@poad/ppo';
import {
  type AlgorithmConfigBase,
  algorithmEntry,
  decodeState,
  encodeState,
  type MetricsRow,
  metricsCsv,
  metricsRow,
  offeredAlgorithms,
  type PlayedEpisode,
  playEpisode,
  presetRun,
  type RunTrainer,
  runTrainerOf,
  type TokenCreditRow,
  tokenCreditRows,
} from '@poad/trainer';
import { readZip, writeZip } from './zip.js';

// One training run in memory: the model's policy, the environments and the trainer of the chosen
// algorithm (its entry in the trainer's registry), with the environment's 'small' preset as the
// command-line apps take it. The page's worker drives it; the speed benchmark drives the same
// code in Node.

/** The environments the playground offers: the tasks of each, and the algorithms its presets offer. */
export const ENVIRONMENTS = {
  virtualhome: {
    label: 'VirtualHome',
    tasks: ['food-preparation', 'entertainment'],
    presets: VIRTUALHOME_PRESETS,
    algorithms: offeredAlgorithms({ presets: VIRTUALHOME_PRESETS }),
  },
  overcooked: {
    label: 'Overcooked',
    tasks: ['tomato-salad', 'tomato-lettuce-salad'],
    presets: OVERCOOKED_PRESETS,
    algorithms: offeredAlgorithms({ presets: OVERCOOKED_PRESETS }),
  },
} as const;

export type EnvFamily = keyof typeof ENVIRONMENTS;
/** A registered algorithm's name (`algorithmNames()` of `@poad/trainer`). */
export type PlaygroundAlgorithm = string;

/** What a run is: the environment, task, algorithm and seed, and optionally a smaller rollout. */
export interface SessionSettings {
  env: EnvFamily;
  task: string;
  algo: PlaygroundAlgorithm;
  seed: number;
  /**
   * Parallel environments (default: the preset's, 8); for a group-relative algorithm, one group
   * of this many episodes from one start state.
   */
  envs?: number;
  /** Steps per environment per iteration (default: the preset's, 16). */
  numSteps?: number;
}

/** What the page shows after each iteration. */
export interface IterationSummary {
  row: MetricsRow;
  credit: { title: string; rows: TokenCreditRow[] };
  seconds: number;
}

/** The LoRA settings of the command-line apps' defaults. */
const LORA = { r: 8, alpha: 16 };

/** Checks settings coming from a page, a URL or an uploaded file; throws naming the bad field. */
export function checkSettings(s: SessionSettings): SessionSettings {
  const family = ENVIRONMENTS[s.env];
  if (!family)
    throw new Error(
      `unknown environment "${s.env}"; choose ${Object.keys(ENVIRONMENTS).join(' or ')}`,
    );
  if (!(family.tasks as readonly string[]).includes(s.task)) {
    throw new Error(
      `unknown ${family.label} task "${s.task}"; choose one of ${family.tasks.join(', ')}`,
    );
  }
  if (!(family.algorithms as readonly string[]).includes(s.algo)) {
    throw new Error(
      `${s.algo} is not offered for ${family.label}; choose one of ${family.algorithms.join(', ')}`,
    );
  }
  for (const [k, v] of [
    ['seed', s.seed],
    ['envs', s.envs],
    ['numSteps', s.numSteps],
  ] as const) {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < (k === 'seed' ? 0 : 1))) {
      throw new Error(
        `${k} must be a ${k === 'seed' ? 'non-negative' : 'positive'} integer, got ${v}`,
      );
    }
  }
  return s;
}

function makeEnv(s: SessionSettings): TextEnv {
  return s.env === 'virtualhome'
    ? createVirtualHomeEnv(s.task as VirtualHomeTask)
    : createOvercookedEnv(s.task as OvercookedTaskName);
}

/**
 * The config of a run: its environment's 'small' preset for its algorithm, with its seed and
 * rollout length. `envs` sets the parallel environments; for an algorithm whose config decides
 * them (the group-relative ones: groups × group size) it is one group of that many episodes.
 */
export function trainerConfig(s: SessionSettings): {
  numEnvs: number;
  config: AlgorithmConfigBase;
} {
  const entry = algorithmEntry(s.algo);
  const grouped = entry.runOptions !== undefined && s.envs !== undefined;
  const p = presetRun(ENVIRONMENTS[s.env].presets, s.algo, {
    seed: s.seed,
    ...(s.numSteps ? { numSteps: s.numSteps } : {}),
    ...(grouped ? { groups: 1, groupSize: s.envs } : {}),
  });
  return { numEnvs: grouped ? p.envs : (s.envs ?? p.envs), config: p.config };
}

export class Session {
  readonly settings: SessionSettings;
  readonly policy: TokenPolicy & { clearFeatureCache(): void; dispose?(): void };
  readonly metrics: MetricsRow[] = [];
  private readonly model: CausalLM;
  private readonly env: ReturnType<typeof makeVecEnv>;
  private readonly trainer: RunTrainer;
  private wallSeconds = 0;

  private constructor(settings: SessionSettings, model: CausalLM) {
    this.settings = settings; // checked by Session.create
    this.model = model;
    const tokenizer = model.tokenizer;
    if (!tokenizer)
      throw new Error(
        'the model has no tokenizer.json; the playground scores action labels with it',
      );
    const entry = algorithmEntry(settings.algo);
    const { numEnvs, config } = trainerConfig(settings);
    this.policy = entry.createPolicy(model, tokenizer, config, {}).policy;
    this.env = makeVecEnv(() => makeEnv(settings), numEnvs, { seed: settings.seed });
    this.trainer = runTrainerOf(
      new entry.Trainer({ policy: this.policy, env: this.env, config }),
      entry.report,
    );
  }

  /**
   * A run on `loadModel`'s model. The loader gets the LoRA and value-head options (the value head
   * is left out for ETPO, whose critic is a second adapter) and must seed them with `seed`.
   */
  static async create(
    settings: SessionSettings,
    loadModel: (o: {
      seed: number;
      lora: { r: number; alpha: number };
      valueHead: boolean;
    }) => Promise<CausalLM>,
  ): Promise<Session> {
    checkSettings(settings);
    const model = await loadModel({
      seed: settings.seed,
      lora: LORA,
      valueHead: algorithmEntry(settings.algo).valueHead,
    });
    try {
      return new Session(settings, model);
    } catch (e) {
      model.dispose();
      throw e;
    }
  }

  get iteration(): number {
    return this.trainer.counters.iterations;
  }

  /** One iteration (rollout + update): its metrics row and the token-credit rows of its rollout. */
  async iterate(): Promise<IterationSummary> {
    const t0 = performance.now();
    this.policy.clearFeatureCache();
    const report = await this.trainer.iterate();
    const seconds = (performance.now() - t0) / 1000;
    this.wallSeconds += seconds;
    const row = metricsRow(report, this.trainer.counters.envSteps, this.wallSeconds);
    this.metrics.push(row);
    const tokenizer = this.model.tokenizer!;
    const tokenText = (id: number) =>
      id < tokenizer.vocabSize ? tokenizer.decode([id]) : Promise.resolve(`<${id}>`);
    const rows = await tokenCreditRows(report, tokenText, 6);
    return {
      row,
      credit: {
        title: `Per-token ${report.credit.name}, iteration ${report.iteration} (${report.credit.level} level)`,
        rows,
      },
      seconds,
    };
  }

  /** One episode with the current policy, step by step with every action's probability. */
  async play(greedy: boolean, seed: number): Promise<PlayedEpisode & { episode?: EpisodeStats }> {
    const { config } = trainerConfig(this.settings);
    return playEpisode(
      { makeEnv: () => makeEnv(this.settings) },
      { policy: this.policy },
      this.settings.task,
      { greedy, seed, config, maxSteps: 50 },
      () => {},
    );
  }

  metricsCsv(): string {
    return metricsCsv(this.metrics);
  }

  /** The LoRA adapter as a PEFT folder in a zip (Python PEFT loads it after unzipping). */
  async adapterZip(): Promise<Uint8Array> {
    const files = await adapterFiles(this.model);
    return writeZip(Object.entries(files).map(([name, data]) => ({ name, data })));
  }

  /**
   * The whole run in a zip: settings and metrics, the trainer's state (weights, optimisers,
   * generator, counters), the environments' state, the PEFT adapter and the value head.
   * {@link Session.restore} continues it exactly.
   */
  async checkpoint(): Promise<Uint8Array> {
    const state = encodeState(await this.trainer.getState());
    const files: { name: string; data: string | Uint8Array }[] = [
      {
        name: 'playground.json',
        data: JSON.stringify(
          {
            format: 'poad-playground-run',
            version: 1,
            settings: this.settings,
            iteration: this.iteration,
            wallSeconds: this.wallSeconds,
            env: this.env.getState(),
            metrics: this.metrics,
          },
          null,
          1,
        ),
      },
      { name: 'trainer.json', data: state.json },
      { name: 'trainer.safetensors', data: state.safetensors },
      { name: 'metrics.csv', data: this.metricsCsv() },
      ...Object.entries(await adapterFiles(this.model)).map(([name, data]) => ({
        name: `adapter/${name}`,
        data,
      })),
    ];
    if (this.model.valueHead)
      files.push({ name: 'adapter/value_head.safetensors', data: await valueHeadFile(this.model) });
    return writeZip(files);
  }

  /** The settings stored in a checkpoint zip (to create the session that restores it). */
  static settingsOf(zip: Uint8Array): SessionSettings {
    return checkSettings(runFile(zip).settings);
  }

  /** Continues a run saved by {@link Session.checkpoint} (same settings). */
  async restore(zip: Uint8Array): Promise<void> {
    const files = readZip(zip);
    const run = runFile(zip);
    if (JSON.stringify(run.settings) !== JSON.stringify(this.settings)) {
      throw new Error(
        'the checkpoint was saved with other settings; create the session from Session.settingsOf(zip)',
      );
    }
    const json = files.get('trainer.json');
    const bytes = files.get('trainer.safetensors');
    if (!json || !bytes)
      throw new Error('the checkpoint has no trainer.json / trainer.safetensors');
    const state = decodeState(new TextDecoder().decode(json), bytes, {
      json: 'trainer.json',
      safetensors: 'trainer.safetensors',
    });
    this.trainer.setState(state);
    this.trainer.steps = await this.env.restore(run.env);
    this.metrics.splice(0, this.metrics.length, ...run.metrics);
    this.wallSeconds = run.wallSeconds;
  }

  dispose(): void {
    this.trainer.dispose();
    void this.env.close();
    this.policy.dispose?.();
    this.model.dispose();
  }
}

interface RunFile {
  format: string;
  settings: SessionSettings;
  wallSeconds: number;
  env: VecEnvState;
  metrics: MetricsRow[];
}

function runFile(zip: Uint8Array): RunFile {
  const raw = readZip(zip).get('playground.json');
  if (!raw) throw new Error('not a playground checkpoint: playground.json is missing from the zip');
  const run = JSON.parse(new TextDecoder().decode(raw)) as RunFile;
  if (run.format !== 'poad-playground-run')
    throw new Error(`playground.json: unknown format "${run.format}"`);
  return run;
}
