import type { MetricsRow } from '@poad/run-kit';
import type { RunIterationReport } from './run-trainer.js';

/** One metrics row per iteration: the rollout's finished episodes and every update diagnostic. */
export function metricsRow(
  report: RunIterationReport,
  envSteps: number,
  wallSeconds: number,
): MetricsRow {
  const eps = report.rollout.episodes;
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  const withSuccess = eps.filter((e) => typeof e.success === 'boolean');
  return {
    iteration: report.iteration,
    envSteps,
    wallSeconds: Number(wallSeconds.toFixed(2)),
    episodes: eps.length,
    episodeReturn: mean(eps.map((e) => e.discountedReturn)),
    episodeLength: mean(eps.map((e) => e.length)),
    successRate: withSuccess.length ? mean(withSuccess.map((e) => (e.success ? 1 : 0))) : null,
    // Episodes a group rollout cut at its step limit (counted above as not successful).
    ...(report.rollout.episodesCut === undefined
      ? {}
      : { episodesCut: report.rollout.episodesCut }),
    meanReward: report.rollout.meanReward,
    labelMass: report.rollout.labelMass,
    // Where the rollout's time went (seconds): the policy choosing actions, the critic, the envs.
    rolloutActSeconds: round3(report.rollout.phaseSeconds.act),
    rolloutValueSeconds: round3(report.rollout.phaseSeconds.values),
    rolloutEnvSeconds: round3(report.rollout.phaseSeconds.env),
    ...report.update,
    // On webgpu: the GPU programs the iteration dispatched, the host reads it waited on and
    // their bytes (acting, values and update; see RunIterationReport.gpu).
    ...(report.gpu
      ? {
          gpuPrograms: report.gpu.programs,
          gpuReads: report.gpu.reads,
          gpuReadBytes: report.gpu.readBytes,
        }
      : {}),
  };
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
