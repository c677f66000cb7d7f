import { OptionError } from '@poad/config';
import { END_OF_TEXT_ID } from '@poad/default-model';
import {
  BUILTIN_DATASETS,
  type CsvDatasetSpec,
  createDataSciCodingEnv,
  DATASCICODING_PRESETS,
  type DatasetSpec,
  DEFAULT_LIMITS,
  type SandboxLimits,
} from '@poad/envs-datascicoding';
import type { AppSpec } from '@poad/trainer';
import { recordPrograms } from './programs.js';

/** The token a generated program ends with (`</s>` of the embedded models' tokenizers). */
const STOP_TOKEN = END_OF_TEXT_ID;

/** The share of rows the named datasets hold out, and the seed of the draw. */
export const NAMED_HOLDOUT = { fraction: 0.25, seed: 0 } as const;

const dataFile = (name: string) => new URL(`../data/${name}`, import.meta.url).pathname;

/**
 * The CSV datasets of this app that `--dataset NAME` trains on (data/, made by
 * `npm run make-datasets`): tables where the choice of model pays (scripts/headroom.py), each
 * holding out a quarter of its rows from the reward (`npm run heldout` scores programs there).
 */
export const NAMED_DATASETS: Readonly<Record<string, CsvDatasetSpec>> = {
  kiln_batches: {
    csv: dataFile('kiln_batches.csv'),
    target: 'glaze_result',
    holdout: { ...NAMED_HOLDOUT },
  },
  ferry_crossings: {
    csv: dataFile('ferry_crossings.csv'),
    target: 'arrival',
    holdout: { ...NAMED_HOLDOUT },
  },
};

/**
 * Dataset spec of the resolved options: a built-in dataset, a named one (NAMED_DATASETS), or
 * `--csv FILE --target COLUMN` (with `--holdout FRACTION [--holdout-seed N]`).
 */
export function datasetOf(task: string, o: Record<string, unknown> = {}): DatasetSpec {
  const named = NAMED_DATASETS[task];
  if (named) return named;
  if (task === 'csv') {
    if (typeof o.csv !== 'string' || typeof o.target !== 'string') {
      throw Object.assign(new Error('--dataset csv needs --csv FILE and --target COLUMN'), {
        name: 'EnvArgumentError',
      });
    }
    return {
      csv: o.csv,
      target: o.target,
      ...(typeof o.maxRows === 'number' ? { maxRows: o.maxRows } : {}),
      ...(typeof o.holdout === 'number'
        ? {
            holdout: {
              fraction: o.holdout,
              seed: typeof o.holdoutSeed === 'number' ? o.holdoutSeed : 0,
            },
          }
        : {}),
    };
  }
  return task as DatasetSpec;
}

/**
 * The sandbox limits of `--timeout SECONDS`: the wall-clock limit of one program, with the CPU
 * limit kept at twice it (the defaults: 30 s and 60 CPU-seconds). Unset: the environment's defaults.
 */
export function sandboxLimits(timeout: unknown): Partial<SandboxLimits> | undefined {
  if (timeout === undefined || timeout === null) return undefined;
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1) {
    throw new OptionError(`--timeout: expected whole seconds (1 or more), got ${String(timeout)}`);
  }
  return {
    timeoutMs: timeout * 1000,
    cpuSeconds: Math.max(DEFAULT_LIMITS.cpuSeconds, 2 * timeout),
  };
}

/** `--timeout`: shared by train:datascicoding and npm run prior. */
export const TIMEOUT_OPTION = {
  type: 'integer',
  optional: true,
  min: 1,
  placeholder: 'seconds',
  description: `Wall-clock limit of one program in the sandbox, all five fits included (default ${
    DEFAULT_LIMITS.timeoutMs / 1000
  }, as in the original environment; the CPU limit is twice it, 60 s at least). It counts wall time, so on a slower or busier machine more programs fail with 'timeout': raise it there to score programs as a faster machine does`,
} as const;

export const dataSciApp: AppSpec = {
  command: 'train:datascicoding',
  // Its presets run the embedded code model and evaluate on 10 episodes per task.
  presets: DATASCICODING_PRESETS,
  summary:
    'Train a code-writing agent: it writes the body of build_model(x_train, y_train), which runs in a sandboxed Python (scikit-learn) and is scored by mean ROC AUC over 5 splits (-1 on failure).',
  taskOption: 'dataset',
  tasks: [...BUILTIN_DATASETS, ...Object.keys(NAMED_DATASETS), 'csv'],
  defaultTask: 'breast_cancer',
  envId: (task) => `datascicoding/${task}`,
  makeEnv: (task, o) => {
    const limits = sandboxLimits(o?.timeout);
    return createDataSciCodingEnv(datasetOf(task, o), limits ? { limits } : {});
  },
  evalTasks: (task) => [task],
  validate: (o) => {
    datasetOf(String(o.task), o);
    sandboxLimits(o.timeout);
    if (o.tokenSpace === 'labels') {
      throw new OptionError(
        "--token-space labels needs a list of valid labels per step; DataSciCoding's actions are free-form code. Use --token-space vocabulary",
      );
    }
    if (o.task !== 'csv' && (o.csv !== undefined || o.target !== undefined)) {
      throw new OptionError('--csv and --target go with --dataset csv');
    }
    if (o.task !== 'csv' && (o.holdout !== undefined || o.holdoutSeed !== undefined)) {
      throw new OptionError(
        `--holdout and --holdout-seed go with --dataset csv${NAMED_DATASETS[String(o.task)] ? ` (${o.task} holds out ${NAMED_HOLDOUT.fraction} of its rows, seed ${NAMED_HOLDOUT.seed}, already)` : ''}`,
      );
    }
    if (o.holdoutSeed !== undefined && o.holdout === undefined) {
      throw new OptionError('--holdout-seed goes with --holdout FRACTION');
    }
  },
  async prepare(o) {
    // The environment's own loading (Python, the dataset, its splits) runs here, before the
    // model loads, and is cached for the environments of the run: a missing target column, a
    // single class or a dataset too small to split stops now.
    try {
      await createDataSciCodingEnv(datasetOf(String(o.task), o)).dataset();
    } catch (err) {
      const name = (err as Error).name;
      if (
        name === 'DatasetError' ||
        name === 'DataSciOptionError' ||
        name === 'PythonUnavailableError'
      ) {
        throw new OptionError((err as Error).message);
      }
      throw err;
    }
  },
  extraOptions: {
    csv: {
      type: 'string',
      optional: true,
      placeholder: 'file',
      description: 'CSV file for --dataset csv',
    },
    target: {
      type: 'string',
      optional: true,
      placeholder: 'column',
      description: 'Target column of --csv',
    },
    maxRows: {
      type: 'integer',
      optional: true,
      min: 10,
      description: 'Use the first N complete rows of --csv (default 2000)',
    },
    holdout: {
      type: 'number',
      optional: true,
      min: 0.01,
      max: 0.9,
      description:
        'Hold this share of every class of --csv apart from the reward (seeded, stratified; the reward splits use the other rows only; npm run heldout -w @poad/train-datascicoding scores programs on them). The named CSV datasets hold out 0.25 already',
    },
    holdoutSeed: {
      type: 'integer',
      optional: true,
      min: 0,
      description: 'Seed of the --holdout draw (default 0)',
    },
    timeout: TIMEOUT_OPTION,
  },
  async onIteration(report, runDir, agent, progress) {
    // Every program of the iteration, in the order they were scored (sample i = t·N + n; for the
    // group-relative algorithms episode after episode), with the best program so far, the
    // code-evolution page and the code curves (programs.ts).
    const { buffer } = report;
    const before = progress.envSteps - buffer.size;
    const programs = [];
    for (let i = 0; i < buffer.size; i++) {
      const ids = Array.from(buffer.action(i));
      if (ids.at(-1) === STOP_TOKEN) ids.pop();
      const body = (await Promise.all(ids.map((t) => agent.tokenText(t)))).join('');
      programs.push({ reward: buffer.rewards[i]!, body, envStep: before + i + 1 });
    }
    const title = `${runDir.split(/[\\/]/).at(-1)}: programs written during training`;
    const s = recordPrograms(runDir, title, report.iteration, programs, {
      layoutEnvs: buffer.numEnvs,
    });
    return { programsRun: s.programsRun, bestReward: s.bestReward };
  },
  examples: [
    'npm run train:datascicoding -- --dataset breast_cancer',
    'npm run train:datascicoding -- --dataset csv --csv data/titanic.csv --target Survived --algo ntpo',
    'npm run train:datascicoding -- --dataset kiln_batches   # a quarter of its rows held out from the reward',
  ],
};

/**
 * Runs a script's `main` when the file is the process's entry point: a bad option prints its
 * message and exits with status 2; any other error is thrown.
 */
export function runScript(url: string, main: (argv: string[]) => Promise<unknown>): void {
  if (url !== `file://${process.argv[1]}`) return;
  main(process.argv.slice(2)).catch((err) => {
    if (err instanceof OptionError) {
      process.stderr.write(`error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  });
}
