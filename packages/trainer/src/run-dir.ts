import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { InputError } from '@poad/config';
import { heldOutLines, heldOutSamples } from '@poad/default-model';
import { createRunDir, runName, writeJsonAtomicSync } from '@poad/run-kit';
import type { Agent } from './agent/agent.js';
import { resolveModelPath } from './agent/model-path.js';
import type { AppSpec } from './app.js';
import type { RunConfig } from './run-config.js';
import { flatRunConfig } from './run-settings.js';

/*
 * The files of a run directory besides checkpoints and metrics: its creation (config.json as the
 * agent settled it, environment.json), perplexity.json, greedy-evals.json, and the error for a
 * file a run cannot go on from.
 */

/**
 * Creates the run directory of a new run: config.json holds the run as the agent settled it (the
 * prompt format it used, the date its chat template sees), environment.json the backend, the
 * GPU, the model and the packages' versions.
 */
export function createRunDirectory(spec: AppSpec, rc: RunConfig, agent: Agent): string {
  const o = rc.run;
  const prompt = agent.prompt ?? { format: 'plain' as const };
  const settled: RunConfig = {
    ...rc,
    run: {
      ...o,
      promptFormat: prompt.format,
      ...(prompt.date === undefined ? {} : { promptDate: prompt.date }),
    },
  };
  return createRunDir(
    o.runs,
    o.runName ?? runName([spec.envId(o.task).replaceAll('/', '-'), o.algo, `s${rc.config.seed}`]),
    flatRunConfig(settled),
    {
      backend: agent.backend,
      ...(agent.gpu ? { gpu: agent.gpu } : {}),
      model: agent.info,
      packages: packageVersions(),
    },
    { unique: o.runName === undefined },
  );
}

/**
 * The text perplexity is measured on: a model folder's own held-out samples (`heldout.jsonl`,
 * prompt and completion as one text, as the code model ships them), else the held-out lines of
 * the embedded default model.
 */
export function heldOutTextsOf(model: string): string[] {
  const samples = heldOutSamples(resolveModelPath(model));
  return samples.length > 0 ? samples.map((s) => s.prompt + s.completion) : heldOutLines();
}

/** perplexity.json's `before` or `after`, on the first `limit` held-out texts (default all). */
export async function recordPerplexity(
  runDir: string,
  agent: Agent,
  when: 'before' | 'after',
  model: string,
  limit: number | undefined,
): Promise<void> {
  const file = join(runDir, 'perplexity.json');
  const heldOut = heldOutTextsOf(model).slice(0, limit);
  if (heldOut.length === 0) return;
  const prev = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>)
    : {};
  writeJsonAtomicSync(file, {
    ...prev,
    [when]: await agent.perplexity(heldOut),
    lines: heldOut.length,
  });
}

/**
 * A JSON file's content; a missing or broken file throws a {@link RunFileError} naming it, which
 * says it is not valid JSON and gives `fix` when there is one.
 */
export function readJsonFile<T>(file: string, fix?: string): T {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch (err) {
    const why = (err as Error).message;
    throw new RunFileError(file, fix === undefined ? why : `not valid JSON (${why}). ${fix}`);
  }
}

/** A file of the run directory that the run cannot go on from; it names the file and the fix. */
export class RunFileError extends InputError {
  override readonly name = 'RunFileError';

  /** The file at fault (the error's `input`). */
  get file(): string {
    return this.input;
  }
}

/**
 * The greedy evaluations of `--eval-every` kept in greedy-evals.json up to iteration `upTo` (a
 * resumed run's), or none.
 */
export function greedyEvalsUpTo(runDir: string, upTo: number): GreedyEval[] {
  const file = join(runDir, 'greedy-evals.json');
  return existsSync(file) ? readGreedyEvals(file).filter((e) => e.iteration <= upTo) : [];
}

/** `greedy-evals.json` of a resumed run: a list of {@link GreedyEval}s, else a {@link RunFileError}. */
function readGreedyEvals(file: string): GreedyEval[] {
  const fix =
    'It keeps the greedy evaluations of --eval-every: restore it from a backup, or delete it to resume without the evaluations made so far.';
  const parsed = readJsonFile<unknown>(file, fix);
  if (!Array.isArray(parsed) || !parsed.every((e) => Number.isInteger(e?.iteration)))
    throw new RunFileError(file, `not a list of evaluations with an iteration each. ${fix}`);
  return parsed as GreedyEval[];
}

/** Versions of the POAD-TS packages this run uses, for environment.json. */
function packageVersions(): Record<string, string> {
  const require = createRequire(import.meta.url);
  const out: Record<string, string> = {};
  for (const name of ['trainer', 'bellman', 'ppo', 'lora-model', 'envs-core', 'run-kit']) {
    try {
      const file = require.resolve(`@poad/${name}/package.json`);
      out[`@poad/${name}`] = (
        JSON.parse(readFileSync(file, 'utf8')) as { version: string }
      ).version;
    } catch {
      // Not installed (e.g. a bundle that inlined it).
    }
  }
  return out;
}

/** One greedy evaluation during training, as written to `greedy-evals.json`. */
export interface GreedyEval {
  iteration: number;
  envSteps: number;
  /** Wall time of the run so far, evaluations included. */
  wallSeconds: number;
  /** Of that, seconds spent in these evaluations. */
  evalSeconds: number;
  episodes: number;
  successRate: number;
  meanReturn: number;
}
