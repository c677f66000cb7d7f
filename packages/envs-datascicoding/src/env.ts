import {
  EpisodeOverError,
  NotResetError,
  ReturnTracker,
  type TextEnv,
  type TextStep,
} from '@poad/envs-core';
import {
  assertSplittable,
  checkDatasetSpec,
  type Dataset,
  type DatasetSpec,
  datasetName,
  loadDataset,
} from './datasets.js';
import { DataSciOptionError, EnvBusyError } from './errors.js';
import { chooseIsolation } from './isolation.js';
import { resolveLimits } from './limits.js';
import {
  infillPrompt,
  initialPrompt,
  type PromptData,
  type PromptParts,
  reflectionPrompt,
} from './prompts.js';
import { checkPython, DEFAULT_PYTHON } from './python.js';
import { defaultScoreCache, type ScoreCache } from './score-cache.js';
import { type EvaluateOptions, evaluateProgram } from './scoring.js';
import { checkScoringRule, DEFAULT_SCORING } from './seeding.js';

/** Attempts per episode, as in the original environment. */
export const DEFAULT_MAX_ATTEMPTS = 5;

/** Options of {@link createDataSciCodingEnv}. */
export interface DataSciCodingOptions extends Omit<EvaluateOptions, 'signal' | 'cache'> {
  /**
   * Where scores are looked up and kept (`seeded-v1` only): default the process's shared
   * in-memory cache ({@link defaultScoreCache}), so a program written again is not run again;
   * `false` runs every program.
   */
  cache?: ScoreCache | false;
  /** Reward of a failed attempt (default -1). */
  failureReward?: number;
  /** Attempts before the episode is truncated (default 5). */
  maxAttempts?: number;
  /** Turns the prompt halves into the observation (default CodeLlama's `<PRE> … <SUF>… <MID>`). */
  formatPrompt?: (parts: PromptParts) => string;
  /** Longest error text shown in the fix-it prompt (default 400 characters). */
  maxErrorChars?: number;
  /** Discount of `info.discountedReturn` (default 1). */
  gamma?: number;
}

/** The DataSciCoding environment: a {@link TextEnv} with an open action space. */
export interface DataSciCodingEnv extends TextEnv {
  /** The prepared dataset (loaded on the first reset). */
  dataset(): Promise<Dataset>;
}

/**
 * Creates a DataSciCoding environment with id `datascicoding/<dataset>`.
 *
 * Each step's action is the body of `build_model(x_train, y_train)`. It is run in the sandbox on
 * five random 50/50 splits; the reward is the mean ROC AUC. A failed attempt gives
 * `failureReward` and a prompt showing the error and the attempt. The episode is `terminated`
 * by a successful attempt and `truncated` when `maxAttempts` attempts have all failed. At the end
 * the observation is the first prompt again (what the next episode starts with).
 *
 * `info` of a step: `attempt`, `auc`, `aucs`, `std` (population), `reason` and `error` on
 * failure, `isolation`, `scoring` (the seeding rule), `cached` (the score came from the cache),
 * `durationMs`; at the end also `discountedReturn` and `length`.
 */
export function createDataSciCodingEnv(
  spec: DatasetSpec,
  options: DataSciCodingOptions = {},
): DataSciCodingEnv {
  checkDatasetSpec(spec);
  const id = `datascicoding/${datasetName(spec)}`;
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new DataSciOptionError(
      'maxAttempts',
      `expected a positive integer, got ${String(maxAttempts)}.`,
    );
  }
  const failureReward = options.failureReward ?? -1;
  if (!Number.isFinite(failureReward)) {
    throw new DataSciOptionError(
      'failureReward',
      `expected a finite number, got ${String(failureReward)}.`,
    );
  }
  const scoring = checkScoringRule(options.scoring ?? DEFAULT_SCORING);
  resolveLimits(options.limits, options.timeLimit);
  const cache = options.cache === false ? undefined : (options.cache ?? defaultScoreCache());
  const python = options.python ?? DEFAULT_PYTHON;
  const format = options.formatPrompt ?? infillPrompt;
  const tracker = new ReturnTracker(options.gamma ?? 1);

  let data: Promise<Dataset> | undefined;
  let promptData: PromptData | undefined;
  let attempts = 0;
  let running = false;
  let everReset = false;
  let closed = false;
  let inFlight: AbortController | undefined;

  const dataset = (): Promise<Dataset> => {
    data ??= (async () => {
      await checkPython(python);
      const loaded = await loadDataset(spec, python);
      assertSplittable(loaded);
      await chooseIsolation(options.isolation ?? 'auto', python, options.tmpDir);
      return loaded;
    })();
    data.catch(() => {
      data = undefined;
    });
    return data;
  };

  const initialObservation = (): string => format(initialPrompt(promptData as PromptData));

  return {
    id,
    dataset,
    async reset(): Promise<TextStep> {
      const loaded = await dataset();
      promptData = { title: loaded.title, n: loaded.n, d: loaded.d };
      attempts = 0;
      running = true;
      everReset = true;
      tracker.reset();
      return {
        observation: initialObservation(),
        actions: null,
        reward: 0,
        terminated: false,
        truncated: false,
        info: {},
      };
    },
    async step(action: string): Promise<TextStep> {
      if (!everReset) throw new NotResetError(id);
      if (!running) throw new EpisodeOverError(id);
      if (inFlight) throw new EnvBusyError(id);
      inFlight = new AbortController();
      let loaded: Dataset;
      try {
        loaded = await dataset();
      } catch (err) {
        inFlight = undefined;
        throw err;
      }
      attempts++;
      let evaluation: Awaited<ReturnType<typeof evaluateProgram>>;
      try {
        evaluation = await evaluateProgram(loaded, action, {
          ...options,
          python,
          scoring,
          cache,
          signal: (inFlight as AbortController).signal,
        });
      } finally {
        inFlight = undefined;
      }
      const reward = evaluation.ok ? evaluation.auc : failureReward;
      tracker.add(reward);
      const terminated = evaluation.ok;
      const truncated = !terminated && attempts >= maxAttempts;
      const info: Record<string, unknown> = {
        attempt: attempts,
        auc: evaluation.ok ? evaluation.auc : null,
        aucs: evaluation.aucs,
        std: evaluation.ok ? evaluation.std : null,
        isolation: evaluation.isolation ?? null,
        scoring: evaluation.scoring,
        cached: evaluation.cached === true,
        durationMs: evaluation.durationMs,
      };
      if (!evaluation.ok) {
        info.reason = evaluation.reason;
        info.error = evaluation.error;
      }
      if (terminated || truncated) {
        running = false;
        info.discountedReturn = tracker.value;
        info.length = tracker.length;
      }
      const observation = terminated
        ? initialObservation()
        : format(
            reflectionPrompt(
              promptData as PromptData,
              action,
              evaluation.error ?? '',
              options.maxErrorChars,
            ),
          );
      if (closed) running = false;
      return { observation, actions: null, reward, terminated, truncated, info };
    },
    async close(): Promise<void> {
      closed = true;
      running = false;
      inFlight?.abort();
    },
  };
}
