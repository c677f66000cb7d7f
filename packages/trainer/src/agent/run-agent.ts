/**
 * The agent a resolved run asks for: its model option resolved (for a resumed Hub model, the
 * commit the run recorded), downloaded with a progress bar, and built by `createLmAgent`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DownloadProgress, formatBytes, parseModelId } from '@poad/hf-files';
import { ProgressBar } from '@poad/run-kit';
import type { BackendChoice } from '@poad/tfjs-kernels';
import type { RunConfig } from '../run-config.js';
import type { MatMulOption } from '../run-options.js';
import type { Agent } from './agent.js';
import { createLmAgent } from './create-lm-agent.js';
import { embeddedStopTokenIds, isHubModelId, resolveModelPath } from './model-path.js';

/** What environment.json records of a Hub model (`model.hub`, written by `createLmAgent`). */
interface RecordedHubModel {
  repo?: unknown;
  commit?: unknown;
}

/**
 * What a resumed run's environment.json records of its model (`createLmAgent`'s `info`): the Hub
 * model it loaded and how its products ran. Empty for a new run or an unreadable file.
 */
function recordedModel(runDir: string | undefined): { hub?: RecordedHubModel; products?: unknown } {
  if (runDir === undefined) return {};
  try {
    const env = JSON.parse(readFileSync(join(runDir, 'environment.json'), 'utf8')) as {
      model?: { hub?: RecordedHubModel; products?: unknown };
    };
    return env.model ?? {};
  } catch {
    return {};
  }
}

/**
 * The model a run loads: the `model` option resolved ({@link resolveModelPath}); for a run being
 * resumed (or evaluated) on a Hub model, that repository at the commit its environment.json
 * recorded (`hub`), `ORG/NAME@<commit>`, which the cache serves without any request even after
 * the branch moved.
 */
function modelToLoad(
  rc: RunConfig,
  hub: RecordedHubModel | undefined,
  log: (line: string) => void,
): string {
  const model = resolveModelPath(rc.run.model);
  const runDir = rc.run.resume;
  if (runDir === undefined || !isHubModelId(model)) return model;
  const id = parseModelId(model);
  if (
    id.kind === 'hub' &&
    hub?.repo === id.repo &&
    typeof hub.commit === 'string' &&
    /^[0-9a-f]{40}$/.test(hub.commit)
  ) {
    return `${id.repo}@${hub.commit}`;
  }
  log(
    `warning: ${join(runDir, 'environment.json')} records no commit of ${model}; loading ${model} as it is now, which may differ from the model the run started with`,
  );
  return model;
}

/**
 * A progress bar for a model download on standard error (bytes, rate, ETA), drawn from the
 * download's reports; none when the model is cached.
 */
function downloadBar(): { onProgress(p: DownloadProgress): void; finish(): void } {
  let bar: ProgressBar | undefined;
  return {
    onProgress(p) {
      if (p.phase === 'done') {
        if (bar !== undefined && p.total > 0)
          bar.update(p.total, { files: `${p.files}/${p.files}` });
        return;
      }
      if (p.total <= 0) return;
      if (bar === undefined) {
        bar = new ProgressBar({
          total: p.total,
          label: `downloading ${p.repo}`,
          format: formatBytes,
        });
        // Bytes of an earlier, interrupted download do not count towards the rate.
        bar.resumeFrom(p.bytes);
      }
      bar.update(p.bytes, {
        rate: `${formatBytes(p.rate)}/s`,
        files: `${p.filesDone}/${p.files}`,
        ...(p.phase === 'wait' ? { waiting: `another process fetches ${p.file}` } : {}),
      });
    },
    finish() {
      bar?.finish();
    },
  };
}

/**
 * The language-model agent a resolved run asks for (model, backend, threads, LoRA, its
 * algorithm's policy, the prompt format), and the run with what the agent settled: the prompt
 * format it used (`auto` becomes `plain` or `chat`) and, for `chat`, the date its template sees.
 * A Hub model is downloaded first, with a progress bar unless the run is quiet.
 */
export async function createRunAgent(
  rc: RunConfig,
  log: (line: string) => void,
): Promise<{ agent: Agent; rc: RunConfig }> {
  const { run, config } = rc;
  const stopTokenIds = embeddedStopTokenIds(run.model);
  const recorded = recordedModel(rc.run.resume);
  const model = modelToLoad(rc, recorded.hub, log);
  const bar = run.quiet || !isHubModelId(model) ? undefined : downloadBar();
  let agent: Agent;
  try {
    agent = await createLmAgent({
      model,
      backend: run.backend as BackendChoice,
      threads: run.threads,
      weightDtype: run.weightDtype,
      matmul: run.matmul as MatMulOption,
      ...(recorded.products === undefined ? {} : { recordedProducts: recorded.products }),
      log,
      seed: config.seed,
      lora: { r: run.loraRank, alpha: run.loraAlpha },
      algorithm: rc.algorithm.name,
      config,
      promptFormat: run.promptFormat,
      ...(run.promptDate === undefined ? {} : { promptDate: run.promptDate }),
      ...(stopTokenIds ? { stopTokenIds } : {}),
      ...(bar ? { onProgress: bar.onProgress } : {}),
    });
  } finally {
    bar?.finish();
  }
  const hub = agent.info.hub as
    | { repo: string; revision: string; commit: string; warning?: string }
    | undefined;
  if (hub?.warning) log(`warning: ${hub.warning}`);
  if (hub)
    log(
      `model ${hub.repo}: commit ${hub.commit}${hub.revision === hub.commit ? '' : ` (${hub.revision})`}`,
    );
  const prompt = agent.prompt ?? { format: 'plain' as const };
  return {
    agent,
    rc: {
      ...rc,
      run: {
        ...run,
        promptFormat: prompt.format,
        ...(prompt.date === undefined ? {} : { promptDate: prompt.date }),
      },
    },
  };
}
