import { isAbsolute, resolve } from 'node:path';
import { OptionError } from '@poad/config';
import { END_OF_TEXT_ID } from '@poad/default-model';
import {
  BUILTIN_DATASETS,
  CPU_TIME_BACKSTOP_FACTOR,
  CPU_TIME_DEFAULT_SECONDS,
  type CsvDatasetSpec,
  createDataSciCodingEnv,
  DATASCICODING_PRESETS,
  type DatasetSpec,
  DEFAULT_LIMITS,
  DEFAULT_SCORING,
  LEGACY_SCORING,
  type SandboxLimits,
  SCORING_RULES,
  type ScoringRule,
  TIME_LIMITS,
  type TimeLimit,
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
      throw new OptionError('--dataset csv needs --csv FILE and --target COLUMN');
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
 * A relative path given to `npm run prior` or `npm run heldout`, which npm runs in this app's
 * folder (`-w`), taken from where the command was typed (`INIT_CWD`), as the training command,
 * run from the repository's root, takes it from there.
 */
export function userPath(path: string): string {
  return isAbsolute(path) ? path : resolve(process.env.INIT_CWD || process.cwd(), path);
}

/**
 * The sandbox limits of `--timeout SECONDS` under `--time-limit`: with `wall` (default) the
 * wall-clock limit of one program, the CPU limit kept at twice it (the defaults: 30 s and 60
 * CPU-seconds); with `cpu` the program's CPU seconds, the wall-clock backstop 10 times it.
 * Unset: the environment's defaults for that clock.
 */
export function sandboxLimits(
  timeout: unknown,
  timeLimit: TimeLimit = 'wall',
): Partial<SandboxLimits> | undefined {
  if (timeout === undefined || timeout === null) return undefined;
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1) {
    throw new OptionError(`--timeout: expected whole seconds (1 or more), got ${String(timeout)}`);
  }
  if (timeLimit === 'cpu') {
    return { cpuSeconds: timeout, timeoutMs: CPU_TIME_BACKSTOP_FACTOR * timeout * 1000 };
  }
  return {
    timeoutMs: timeout * 1000,
    cpuSeconds: Math.max(DEFAULT_LIMITS.cpuSeconds, 2 * timeout),
  };
}

/** `--timeout`: shared by train:datascicoding, npm run prior and npm run heldout. */
export const TIMEOUT_OPTION = {
  type: 'integer',
  optional: true,
  min: 1,
  placeholder: 'seconds',
  description: `Time limit of one program in the sandbox, all five fits included. With --time-limit wall (default ${
    DEFAULT_LIMITS.timeoutMs / 1000
  } s, as in the original environment) wall time, the CPU limit twice it (60 s at least): on a slower or busier machine more programs fail with 'timeout', so raise it there to score programs as a faster machine does. With --time-limit cpu the program's own CPU time (default ${CPU_TIME_DEFAULT_SECONDS} s), with a wall-clock backstop ${CPU_TIME_BACKSTOP_FACTOR} times it`,
} as const;

/** `--time-limit`: which clock --timeout counts. */
export const TIME_LIMIT_OPTION = {
  type: 'enum',
  choices: TIME_LIMITS,
  default: 'wall',
  description:
    "Clock of --timeout: wall (the original environment's) or cpu (the program's CPU time from its first line; the same programs are stopped on a loaded machine as on an idle one, so a run repeats there; a program that waits without computing is stopped by a wall-clock backstop)",
} as const;

/** `--scoring`: how a program's randomness is seeded when it is scored. */
export const SCORING_OPTION = {
  type: 'enum',
  choices: SCORING_RULES,
  default: DEFAULT_SCORING,
  description: `How a program's randomness is seeded when it is scored: seeded-v1 (from the program's text and the data: the same program on the same data scores the same every time, so a run repeats and resumes bit for bit) or os-seeded (from the operating system, the rule of runs recorded without this field: a program without its own random_state can score differently each time)`,
} as const;

/** The rule a run's rewards were scored by: its config.json's `scoring`, os-seeded when absent. */
export function scoringOf(config: Readonly<Record<string, unknown>>): ScoringRule {
  const rule = config.scoring;
  return typeof rule === 'string' && (SCORING_RULES as readonly string[]).includes(rule)
    ? (rule as ScoringRule)
    : LEGACY_SCORING;
}

/** The clock of a run's time limit: its config.json's `timeLimit`, wall when absent. */
export function timeLimitOf(config: Readonly<Record<string, unknown>>): TimeLimit {
  return config.timeLimit === 'cpu' ? 'cpu' : 'wall';
}

/**
 * Checks the dataset options that go with a task, as the training command takes them: `--csv`
 * and `--target` with `--dataset csv` only, `--holdout` too (the named datasets hold their
 * quarter out already), and `--holdout-seed` with `--holdout`.
 */
export function checkDatasetOptions(task: string, o: Readonly<Record<string, unknown>>): void {
  if (task !== 'csv' && (o.csv !== undefined || o.target !== undefined)) {
    throw new OptionError('--csv and --target go with --dataset csv');
  }
  if (task !== 'csv' && (o.holdout !== undefined || o.holdoutSeed !== undefined)) {
    throw new OptionError(
      `--holdout and --holdout-seed go with --dataset csv${NAMED_DATASETS[task] ? ` (${task} holds out ${NAMED_HOLDOUT.fraction} of its rows, seed ${NAMED_HOLDOUT.seed}, already)` : ''}`,
    );
  }
  if (o.holdoutSeed !== undefined && o.holdout === undefined) {
    throw new OptionError('--holdout-seed goes with --holdout FRACTION');
  }
}

/**
 * The failure reasons of the programs scored since the last iteration began, by program text (the
 * envs of a run record them; onIteration gives each failed row of programs.jsonl its reason).
 */
const failureReasons = new Map<string, string[]>();

export const dataSciApp: AppSpec = {
  command: 'train:datascicoding',
  // Its presets run the embedded code model and evaluate on 10 episodes per task.
  presets: DATASCICODING_PRESETS,
  // Runs recorded before the scoring rule and the time limit were options scored this way.
  recordedDefaults: { scoring: 'os-seeded', timeLimit: 'wall' },
  summary:
    'Train a code-writing agent: it writes the body of build_model(x_train, y_train), which runs in a sandboxed Python (scikit-learn) and is scored by mean ROC AUC over 5 splits (-1 on failure).',
  taskOption: 'dataset',
  tasks: [...BUILTIN_DATASETS, ...Object.keys(NAMED_DATASETS), 'csv'],
  defaultTask: 'breast_cancer',
  envId: (task) => `datascicoding/${task}`,
  makeEnv: (task, o) => {
    const timeLimit = (o?.timeLimit as TimeLimit | undefined) ?? 'wall';
    const limits = sandboxLimits(o?.timeout, timeLimit);
    const env = createDataSciCodingEnv(datasetOf(task, o), {
      scoring: (o?.scoring as ScoringRule | undefined) ?? DEFAULT_SCORING,
      timeLimit,
      ...(limits ? { limits } : {}),
    });
    const step = env.step.bind(env);
    env.step = async (action) => {
      const result = await step(action);
      const reason = result.info.reason;
      if (typeof reason === 'string') {
        const list = failureReasons.get(action) ?? [];
        list.push(reason);
        failureReasons.set(action, list);
      }
      return result;
    };
    return env;
  },
  evalTasks: (task) => [task],
  validate: (o) => {
    datasetOf(String(o.task), o);
    sandboxLimits(o.timeout, o.timeLimit as TimeLimit | undefined);
    if (o.tokenSpace === 'labels') {
      throw new OptionError(
        "--token-space labels needs a list of valid labels per step; DataSciCoding's actions are free-form code. Use --token-space vocabulary",
      );
    }
    checkDatasetOptions(String(o.task), o);
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
    timeLimit: TIME_LIMIT_OPTION,
    scoring: SCORING_OPTION,
  },
  async beforeIteration() {
    // Reasons recorded before an iteration (a resumed run replaying its episodes) are not its own.
    failureReasons.clear();
  },
  async onIteration(report, runDir, agent, progress) {
    // Every program of the iteration, in the order they were scored (sample i = t·N + n; for the
    // group-relative algorithms episode after episode), a failed one with its reason, with the
    // best program so far, the code-evolution page and the code curves (programs.ts).
    const { buffer } = report;
    const before = progress.envSteps - buffer.size;
    const programs = [];
    let timeouts = 0;
    for (let i = 0; i < buffer.size; i++) {
      const ids = Array.from(buffer.action(i));
      if (ids.at(-1) === STOP_TOKEN) ids.pop();
      const body = (await Promise.all(ids.map((t) => agent.tokenText(t)))).join('');
      const reward = buffer.rewards[i]!;
      // Failures of one text come in the order they were scored; any of them fits its rows.
      const reason = reward <= -1 ? failureReasons.get(body)?.shift() : undefined;
      if (reason === 'timeout') timeouts++;
      programs.push({ reward, body, envStep: before + i + 1, ...(reason ? { reason } : {}) });
    }
    failureReasons.clear();
    const title = `${runDir.split(/[\\/]/).at(-1)}: programs written during training`;
    const s = recordPrograms(runDir, title, report.iteration, programs, {
      layoutEnvs: buffer.numEnvs,
    });
    // Programs stopped by the wall-clock limit: the one outcome a repeat of the run can change.
    return { programsRun: s.programsRun, bestReward: s.bestReward, timeouts };
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
