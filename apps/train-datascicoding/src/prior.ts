// The untrained policy's programs: for each dataset, sample programs from the first prompt of
// an episode exactly as a training run does (same prompt, generation settings and stop token),
// score each in the sandbox, and report the share that ran, the mean reward (a failure counts
// −1), the mean and best ROC AUC of those that ran, why the others failed, and which estimators
// it chose.
//
//   npm run prior -w @poad/train-datascicoding -- [--model default-code] [--samples 64]
//     [--run DIR [--checkpoint latest|best|iter-N]]
//     [--datasets iris,wine,breast_cancer,digits,csv,kiln_batches,ferry_crossings]
//     [--csv FILE --target COLUMN [--holdout F [--holdout-seed S]] [--max-rows N]] [--run DIR]
//     [--temperature T --top-k K] [--timeout S] [--time-limit wall|cpu] [--scoring seeded-v1]
//     [--score-cache DIR|off] [--out FILE]
import { basename, join } from 'node:path';
import { formatHelp, kebab, OptionError, type OptionsSchema, resolveOptions } from '@poad/config';
import { END_OF_TEXT_ID } from '@poad/default-model';
import { createRng } from '@poad/envs-core';
import {
  DATASCICODING_PRESETS,
  type DatasetSpec,
  evaluateProgram,
  infillPrompt,
  initialPrompt,
  loadDataset,
  type ScoringRule,
  type TimeLimit,
} from '@poad/envs-datascicoding';
import {
  checkpointsFor,
  loadCheckpoint,
  ProgressBar,
  parseArgsWithConfig,
  parseCheckpointChoice,
  writeJsonAtomicSync,
} from '@poad/run-kit';
import { createLmAgent, releaseBackend, resolveModelPath } from '@poad/trainer';
import {
  commandDatasetSpec,
  type PriorDatasetRecord,
  priorDatasetRecord,
  readRunConfig,
  runDatasetMismatch,
  SCORE_CACHE_OPTION,
  scoreCacheOf,
} from './command-options.js';
import { chosenEstimator } from './programs.js';
import {
  dataSciApp,
  datasetOf,
  runScript,
  SCORING_OPTION,
  sandboxLimits,
  scoringOf,
  TIME_LIMIT_OPTION,
  TIMEOUT_OPTION,
  timeLimitOf,
  userPath,
} from './spec.js';

/** The CSV the measurements use besides the built-in datasets. */
export const PLANT_HEALTH = {
  csv: new URL('../data/plant_health.csv', import.meta.url).pathname,
  target: 'health',
};

// The sampling settings of the environment's 'small' preset, as a POAD run takes them.
const small = DATASCICODING_PRESETS.presets.small!.values as {
  temperature: number;
  topK: number;
  maxNewTokens: number;
};

const schema = {
  model: {
    type: 'string',
    default: 'default-code',
    placeholder: 'dir',
    description: "Model folder; 'default-code' is the embedded code model",
  },
  datasets: {
    type: 'list',
    default: ['iris', 'wine', 'breast_cancer', 'digits', 'csv'],
    description:
      "Datasets: the training command's (kiln_batches and ferry_crossings sampled on the prompt of their reward rows), and 'csv' for the bundled data/plant_health.csv (target health). With --csv or --run, none unless given",
  },
  csv: {
    type: 'string',
    optional: true,
    placeholder: 'file',
    description:
      'Your own table, as train:datascicoding --dataset csv takes it (same preprocessing, same held-out rows); it is named by its file name in the output (what npm run heldout and compare look up)',
  },
  target: {
    type: 'string',
    optional: true,
    placeholder: 'column',
    description: 'Target column of --csv',
  },
  holdout: {
    type: 'number',
    optional: true,
    min: 0.01,
    max: 0.9,
    description:
      "Held-out share of --csv, as the training run holds it out (the prompt then gives the reward rows' shape)",
  },
  holdoutSeed: {
    type: 'integer',
    optional: true,
    min: 0,
    description: 'Seed of --holdout (default 0)',
  },
  maxRows: {
    type: 'integer',
    optional: true,
    min: 10,
    description: 'Use the first N complete rows of --csv (default 2000)',
  },
  run: {
    type: 'string',
    optional: true,
    placeholder: 'dir',
    description:
      "A training run whose dataset and scoring to use: its config.json's --dataset (for csv its --csv, --target, --holdout, --holdout-seed, --max-rows), --scoring, --time-limit and --timeout; any of them given here as well must agree",
  },
  checkpoint: {
    type: 'string',
    optional: true,
    placeholder: 'latest|best|iter-N',
    pattern: /^(latest|best|iter-[0-9]+)$/,
    expected: 'latest, best or iter-N',
    description:
      "With --run: sample the programs of that run's trained policy at this checkpoint (latest, best: kept by --keep-best, or iter-N) instead of the untrained one",
  },
  samples: { type: 'integer', default: 64, min: 1, description: 'Programs per dataset' },
  temperature: {
    type: 'number',
    default: small.temperature,
    min: 0,
    description: 'Sampling temperature (0: greedy)',
  },
  topK: { type: 'integer', default: small.topK, min: 0, description: 'Top-k (0: off)' },
  maxNewTokens: {
    type: 'integer',
    default: small.maxNewTokens,
    min: 1,
    description: 'Longest program in tokens',
  },
  seed: { type: 'integer', default: 1, min: 0, description: 'Seed of the sampling' },
  timeout: TIMEOUT_OPTION,
  timeLimit: TIME_LIMIT_OPTION,
  scoring: SCORING_OPTION,
  scoreCache: SCORE_CACHE_OPTION,
  out: {
    type: 'string',
    optional: true,
    placeholder: 'file',
    description: 'JSON of every program',
  },
} satisfies OptionsSchema;

/** One sampled program and its evaluation. */
export interface PriorProgram {
  body: string;
  tokens: number;
  ok: boolean;
  auc: number | null;
  reason: string | null;
}

/** Figures of one dataset. */
export interface PriorSummary {
  dataset: string;
  samples: number;
  ran: number;
  meanReward: number;
  meanAuc: number | null;
  bestAuc: number | null;
  distinct: number;
  reasons: Record<string, number>;
  estimators: Record<string, number>;
}

/** Summarises the programs of one dataset. */
export function summarise(dataset: string, programs: readonly PriorProgram[]): PriorSummary {
  const ran = programs.filter((p) => p.ok);
  const count = (xs: readonly string[]) =>
    Object.fromEntries(
      [...new Set(xs)]
        .map((x) => [x, xs.filter((y) => y === x).length] as const)
        .sort((a, b) => b[1] - a[1]),
    );
  const aucs = ran.map((p) => p.auc as number);
  return {
    dataset,
    samples: programs.length,
    ran: ran.length / programs.length,
    meanReward: programs.reduce((s, p) => s + (p.ok ? (p.auc as number) : -1), 0) / programs.length,
    meanAuc: aucs.length ? aucs.reduce((a, b) => a + b, 0) / aucs.length : null,
    bestAuc: aucs.length ? Math.max(...aucs) : null,
    distinct: new Set(programs.map((p) => p.body)).size,
    reasons: count(programs.filter((p) => !p.ok).map((p) => p.reason ?? 'unknown')),
    estimators: count(programs.map((p) => chosenEstimator(p.body))),
  };
}

/** The summaries as a Markdown table. */
export function priorTable(rows: readonly PriorSummary[]): string {
  const f = (x: number | null, d = 3) => (x === null ? '–' : x.toFixed(d));
  return [
    '| dataset | programs | share that ran | mean reward | mean AUC (ran) | best AUC | distinct | failures |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.dataset} | ${r.samples} | ${(100 * r.ran).toFixed(0)}% | ${f(r.meanReward)} | ${f(r.meanAuc)} | ${f(r.bestAuc)} | ${r.distinct} | ${Object.entries(
          r.reasons,
        )
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')} |`,
    ),
  ].join('\n');
}

/** One dataset to sample on: its name in the output, its task and spec. */
export interface PriorDataset {
  name: string;
  task: string;
  spec: DatasetSpec;
}

/** How the prior's programs are scored. */
export interface PriorScoring {
  scoring: ScoringRule;
  timeLimit: TimeLimit;
  timeout: number | undefined;
}

type PriorOptions = Record<string, unknown> & {
  datasets: readonly string[];
  csv?: string;
  run?: string;
  scoring: ScoringRule;
  timeLimit: TimeLimit;
  timeout?: number;
};

/** The CSV options, which go with --csv (or with a --run of --dataset csv). */
const CSV_OPTIONS = ['target', 'holdout', 'holdoutSeed', 'maxRows'] as const;

/**
 * The datasets and scoring of a prior: `--datasets` (its default unless --csv or --run is given),
 * `--csv` (the user's table), or `--run` (the dataset and scoring of that run, checked against
 * what is given here). `explicit`: the options given on the command line or in a config file.
 */
export function priorPlan(
  o: PriorOptions,
  explicit: Readonly<Record<string, unknown>>,
): { datasets: PriorDataset[]; scoring: PriorScoring } {
  const own: PriorScoring = { scoring: o.scoring, timeLimit: o.timeLimit, timeout: o.timeout };
  if (o.run !== undefined) {
    if (explicit.datasets !== undefined) {
      throw new OptionError(`--run ${o.run} decides the dataset; leave out --datasets`);
    }
    const config = readRunConfig(userPath(o.run), '--run');
    const task = String(config.task);
    if (!dataSciApp.tasks.includes(task)) {
      throw new OptionError(
        `--run ${o.run}: its config.json names no DataSciCoding dataset (task ${task})`,
      );
    }
    let spec: DatasetSpec;
    if (task === 'csv') {
      if (o.csv !== undefined) {
        spec = commandDatasetSpec('csv', o);
        const mismatch = runDatasetMismatch(config, 'csv', spec);
        if (mismatch) throw new OptionError(`--run ${o.run}: ${mismatch}`);
      } else {
        if (CSV_OPTIONS.some((k) => explicit[k] !== undefined)) {
          throw new OptionError(
            `--run ${o.run}: give --csv FILE with ${CSV_OPTIONS.filter(
              (k) => explicit[k] !== undefined,
            )
              .map((k) => `--${kebab(k)}`)
              .join(', ')} (or leave them out to take the run's)`,
          );
        }
        spec = commandDatasetSpec('csv', config);
      }
    } else {
      if (o.csv !== undefined || CSV_OPTIONS.some((k) => explicit[k] !== undefined)) {
        throw new OptionError(
          `--run ${o.run} trained on --dataset ${task}: --csv and its options go with a run of --dataset csv`,
        );
      }
      spec = datasetOf(task);
    }
    const theirs: PriorScoring = {
      scoring: scoringOf(config),
      timeLimit: timeLimitOf(config),
      timeout: typeof config.timeout === 'number' ? config.timeout : undefined,
    };
    for (const [key, flag] of [
      ['scoring', '--scoring'],
      ['timeLimit', '--time-limit'],
      ['timeout', '--timeout'],
    ] as const) {
      if (explicit[key] !== undefined && own[key] !== theirs[key]) {
        throw new OptionError(
          `${flag} ${String(own[key])}: --run ${o.run} scored its programs with ${flag} ${theirs[key] ?? '(unset: the default)'}; leave ${flag} out to score as it did`,
        );
      }
    }
    const name = task === 'csv' ? basename((spec as { csv: string }).csv) : task;
    return { datasets: [{ name, task, spec }], scoring: theirs };
  }
  const datasets: PriorDataset[] = [];
  const listed = o.csv !== undefined && explicit.datasets === undefined ? [] : o.datasets;
  for (const d of listed) {
    if (d === 'csv') {
      datasets.push({ name: 'plant_health.csv', task: 'csv', spec: PLANT_HEALTH });
      continue;
    }
    if (!dataSciApp.tasks.includes(d)) {
      throw new OptionError(
        `--datasets: unknown dataset ${d}; choose from ${dataSciApp.tasks.join(', ')}`,
      );
    }
    datasets.push({ name: d, task: d, spec: datasetOf(d) });
  }
  if (o.csv !== undefined) {
    const spec = commandDatasetSpec('csv', o);
    const name = basename((spec as { csv: string }).csv);
    if (datasets.some((d) => d.name === name)) {
      throw new OptionError(
        `--csv ${o.csv}: its name ${name} is taken by the bundled table of --datasets csv; rename the file or leave csv out of --datasets`,
      );
    }
    datasets.push({ name, task: 'csv', spec });
  } else if (CSV_OPTIONS.some((k) => explicit[k] !== undefined)) {
    throw new OptionError('--target, --holdout, --holdout-seed and --max-rows go with --csv FILE');
  }
  if (datasets.length === 0) throw new OptionError('no dataset: give --datasets, --csv or --run');
  return { datasets, scoring: own };
}

async function main(argv: readonly string[]): Promise<void> {
  const parsed = await parseArgsWithConfig(argv, schema);
  if (parsed.help) {
    process.stdout.write(
      formatHelp(schema, {
        usage: 'npm run prior -w @poad/train-datascicoding -- [options]',
        summary:
          "Samples programs from the untrained policy on each dataset's first prompt and scores them in the sandbox: share that ran, mean reward, mean and best ROC AUC.",
      }),
    );
    return;
  }
  const o = resolveOptions(schema, parsed.explicit, { sources: parsed.sources });
  const plan = priorPlan(o as PriorOptions, parsed.explicit);
  const specs = plan.datasets;
  const { scoring, timeLimit } = plan.scoring;
  const cache = scoreCacheOf(o.scoreCache, scoring);
  const limits = sandboxLimits(plan.scoring.timeout, timeLimit);
  if (o.checkpoint !== undefined && o.run === undefined)
    throw new OptionError(
      `--checkpoint ${o.checkpoint}: it names a checkpoint of --run DIR; give the run too`,
    );
  const agent = await createLmAgent({
    model: resolveModelPath(o.model),
    backend: 'auto',
    seed: o.seed,
    lora: { r: 8, alpha: 16 },
    stopTokenIds: [END_OF_TEXT_ID],
  });
  // A trained policy: the run's checkpoint's adapter over the same model.
  const trained =
    o.checkpoint === undefined
      ? null
      : await loadCheckpoint(
          userPath(o.run as string),
          (cp) => agent.loadTrainable(join(cp.dir, 'model')),
          {
            candidates: checkpointsFor(
              userPath(o.run as string),
              parseCheckpointChoice(o.checkpoint, '--checkpoint'),
            ),
          },
        );
  const policy = agent.policy as unknown as {
    encodePrompt(o: string): Promise<Int32Array>;
    generateBatch: NonNullable<typeof agent.policy.generateBatch>;
  };
  // The sampler's generator, as a training run's rollout draws from it.
  const rng = createRng(o.seed);
  const summaries: PriorSummary[] = [];
  const all: Record<string, PriorProgram[]> = {};
  const records: Record<string, PriorDatasetRecord> = {};
  for (const { name, task, spec } of specs) {
    let data: Awaited<ReturnType<typeof loadDataset>>;
    try {
      data = await loadDataset(spec);
    } catch (err) {
      const why = (err as Error).name;
      if (why === 'DatasetError' || why === 'DataSciOptionError') {
        throw new OptionError((err as Error).message);
      }
      throw err;
    }
    records[name] = priorDatasetRecord(task, spec, data);
    // The observation a training episode starts with (the env's reset).
    const prompt = infillPrompt(initialPrompt({ title: data.title, n: data.n, d: data.d }));
    const ids = await policy.encodePrompt(prompt);
    const bar = new ProgressBar({ total: o.samples, unit: 'programs', label: name });
    let scored = 0;
    const pending: Promise<PriorProgram>[] = [];
    // Generated 16 at a time (one decoder pass per token for all 16; the same programs as one
    // at a time), each scored in the sandbox while the next ones are generated.
    for (let i = 0; i < o.samples; i += 16) {
      const n = Math.min(16, o.samples - i);
      const batch = await policy.generateBatch(
        Array.from({ length: n }, () => ids),
        {
          maxTokens: o.maxNewTokens,
          temperature: o.temperature,
          topK: o.topK,
          greedy: o.temperature === 0,
          random: () => rng.float(),
        },
      );
      for (const g of batch) {
        pending.push(
          evaluateProgram(data, g.text, {
            scoring,
            timeLimit,
            ...(cache ? { cache } : {}),
            ...(limits ? { limits } : {}),
          }).then((e) => {
            bar.update(++scored);
            return {
              body: g.text,
              tokens: g.tokenIds.length,
              ok: e.ok,
              auc: e.ok ? e.auc : null,
              reason: e.ok ? null : (e.reason ?? null),
            };
          }),
        );
      }
    }
    const programs = await Promise.all(pending);
    bar.finish();
    all[name] = programs;
    summaries.push(summarise(name, programs));
  }
  agent.dispose();
  process.stdout.write(`${priorTable(summaries)}\n`);
  if (o.out) {
    // The rule and clock the rewards were scored by, and each dataset's record (its options,
    // shape and data digest), which npm run heldout checks its own dataset against.
    writeJsonAtomicSync(userPath(o.out), {
      options: o,
      scoring,
      timeLimit,
      datasets: records,
      // The policy sampled: the untrained one, or a run's checkpoint.
      ...(trained
        ? {
            policy: {
              run: o.run,
              checkpoint: trained.name,
              iteration: trained.meta.iteration,
            },
          }
        : {}),
      summaries,
      programs: all,
    });
  }
  await releaseBackend();
}

runScript(import.meta.url, main);
