// The untrained policy's programs: for each dataset, sample programs from the first prompt of
// an episode exactly as a training run does (same prompt, generation settings and stop token),
// score each in the sandbox, and report the share that ran, the mean reward (a failure counts
// −1), the mean and best ROC AUC of those that ran, why the others failed, and which estimators
// it chose.
//
//   npm run prior -w @poad/train-datascicoding -- [--model default-code] [--samples 64]
//     [--datasets iris,wine,breast_cancer,digits,csv,kiln_batches,ferry_crossings] [--temperature T
//     --top-k K] [--timeout S]
//     [--out FILE]
import { formatHelp, OptionError, type OptionsSchema, resolveOptions } from '@poad/config';
import { END_OF_TEXT_ID } from '@poad/default-model';
import { createRng } from '@poad/envs-core';
import {
  DATASCICODING_PRESETS,
  type DatasetSpec,
  evaluateProgram,
  infillPrompt,
  initialPrompt,
  loadDataset,
} from '@poad/envs-datascicoding';
import { ProgressBar, parseArgsWithConfig, writeJsonAtomicSync } from '@poad/run-kit';
import { createLmAgent, releaseBackend, resolveModelPath } from '@poad/trainer';
import { chosenEstimator } from './programs.js';
import { dataSciApp, datasetOf, runScript, sandboxLimits, TIMEOUT_OPTION } from './spec.js';

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
      "Datasets: the training command's (kiln_batches and ferry_crossings sampled on the prompt of their reward rows), and 'csv' for data/plant_health.csv (target health)",
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
  const specs: { name: string; spec: DatasetSpec }[] = o.datasets.map((d) => {
    if (d === 'csv') return { name: 'plant_health.csv', spec: PLANT_HEALTH };
    if (!dataSciApp.tasks.includes(d)) {
      throw new OptionError(
        `--datasets: unknown dataset ${d}; choose from ${dataSciApp.tasks.join(', ')}`,
      );
    }
    return { name: d, spec: datasetOf(d) };
  });
  const limits = sandboxLimits(o.timeout);
  const agent = await createLmAgent({
    model: resolveModelPath(o.model),
    backend: 'auto',
    seed: o.seed,
    lora: { r: 8, alpha: 16 },
    stopTokenIds: [END_OF_TEXT_ID],
  });
  const policy = agent.policy as unknown as {
    encodePrompt(o: string): Promise<Int32Array>;
    generateBatch: NonNullable<typeof agent.policy.generateBatch>;
  };
  // The sampler's generator, as a training run's rollout draws from it.
  const rng = createRng(o.seed);
  const summaries: PriorSummary[] = [];
  const all: Record<string, PriorProgram[]> = {};
  for (const { name, spec } of specs) {
    const data = await loadDataset(spec);
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
          evaluateProgram(data, g.text, limits ? { limits } : {}).then((e) => {
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
    writeJsonAtomicSync(o.out, { options: o, summaries, programs: all });
  }
  await releaseBackend();
}

runScript(import.meta.url, main);
