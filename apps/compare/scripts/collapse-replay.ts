// Replays the collapse monitor of @poad/trainer over the metrics of archived runs (no training):
// which runs it flags and at which iteration, and whether it fires on a run that stayed healthy.
//
//   node --import tsx apps/compare/scripts/collapse-replay.ts [--results DIR] [--only SUBSTRING]
//     [--verbose] [--keep-best RULE] [--collapse-drop D] [--collapse-patience N]
//     [--collapse-floors F:MIN,…] [--max-kl-skip-share S]
//
// Each run is judged as it would be trained today: the run options' defaults, its environment's
// preset (the one the run used) and what its config.json recorded, with the flags given here over
// all of them. A run counts as healthy when its greedy evaluation of the task it trained on ended
// successful (success rate ≥ 0.5), or when its reward over its last 5 iterations is within 0.05 of
// its best over 5 iterations in a row (the reward: DataSciCoding's mean reward per program;
// elsewhere the episode return, as the per-step mean reward of a sparse task is near 0 whatever
// the policy does). Prints one line per run the monitor flags, then the counts; exit 1 when it
// fires on a healthy run.
import { join } from 'node:path';
import { parseArgs, resolveOptions } from '@poad/config';
import {
  CollapseMonitor,
  collapseRuleOf,
  type MonitorOptions,
  presetValues,
  RUN_OPTIONS,
} from '@poad/trainer';
import { APPS } from '../src/apps.js';
import {
  comparisonsIn,
  dataExists,
  isDataFolder,
  listData,
  readJson,
  readText,
  runsOf,
} from '../src/archive-file.js';

const MONITOR = [
  'keepBest',
  'collapseDrop',
  'collapsePatience',
  'collapseFloors',
  'maxKlSkipShare',
] as const;

const schema = {
  results: {
    type: 'string',
    default: 'results',
    description: 'Folder of the archived comparisons',
  },
  only: {
    type: 'string',
    optional: true,
    description: 'Only comparisons whose path contains this',
  },
  verbose: { type: 'boolean', default: false, description: 'A line for every run' },
  ...Object.fromEntries(
    MONITOR.map((k) => [k, { ...RUN_OPTIONS[k], default: undefined, optional: true }]),
  ),
} as const;

/** Every comparison under `dir`, depth first, in name order. */
function allComparisons(dir: string): { path: string; runs: string[] }[] {
  const out: { path: string; runs: string[] }[] = [];
  for (const c of comparisonsIn(dir))
    out.push({ path: c.root, runs: runsOf(c).map((r) => join(c.root, r)) });
  for (const entry of listData(dir)) {
    const sub = join(dir, entry);
    if (
      isDataFolder(sub) &&
      !dataExists(join(sub, 'compare.json')) &&
      !dataExists(join(sub, 'combine.json'))
    )
      out.push(...allComparisons(sub));
  }
  return out;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Healthy: greedy success at the end, or the last 5 iterations' reward within 0.05 of its best 5. */
function healthy(
  run: string,
  rows: Record<string, unknown>[],
  reward: string,
): { healthy: boolean; why: string } {
  if (dataExists(join(run, 'eval.json'))) {
    const ev = readJson<{
      results: Record<string, { task: string; greedy: boolean; successRate: number }>;
    }>(join(run, 'eval.json'));
    const cfg = readJson<{ task: string }>(join(run, 'config.json'));
    const own = Object.values(ev.results).find(
      (r) => r.greedy && (r.task === cfg.task || r.task.endsWith(`/${cfg.task}`)),
    );
    if (own && own.successRate >= 0.5)
      return { healthy: true, why: `greedy success ${own.successRate}` };
  }
  const r = rows.map((x) => Number(x[reward])).filter(Number.isFinite);
  if (r.length < 5) return { healthy: true, why: 'fewer than 5 iterations' };
  let best = Number.NEGATIVE_INFINITY;
  for (let i = 5; i <= r.length; i++) best = Math.max(best, mean(r.slice(i - 5, i)));
  const last = mean(r.slice(-5));
  return {
    healthy: best - last <= 0.05,
    why: `last-5 ${reward} ${last.toFixed(3)}, best ${best.toFixed(3)}`,
  };
}

/** The app that trained a run of `task`. */
function appOfTask(task: string) {
  return Object.values(APPS).find(
    (a) => a.tasks.includes(task) || a.tasks.some((t) => a.envId(t) === task),
  );
}

/** The monitor's options of a run: defaults < its preset < its config.json < the flags given. */
function monitorOptions(
  cfg: Record<string, unknown>,
  given: Record<string, unknown>,
): MonitorOptions {
  const app = appOfTask(String(cfg.task));
  const preset = app
    ? presetValues(
        app.presets,
        String(cfg.preset ?? app.presets.default),
        String(cfg.algo ?? 'poad'),
      )
    : {};
  const pick = (o: Readonly<Record<string, unknown>>) =>
    Object.fromEntries(MONITOR.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
  const schema = Object.fromEntries(MONITOR.map((k) => [k, RUN_OPTIONS[k]]));
  return resolveOptions(
    schema,
    { ...pick(cfg), ...pick(given) },
    {
      layers: [{ name: 'preset', values: pick(preset) }],
    },
  ) as unknown as MonitorOptions;
}

function main(): number {
  const { explicit } = parseArgs(process.argv.slice(2), schema as never);
  const given = resolveOptions(schema as never, explicit) as Record<string, unknown>;
  let flagged = 0;
  let healthyFlagged = 0;
  let runs = 0;
  for (const c of allComparisons(String(given.results))) {
    if (given.only && !c.path.includes(String(given.only))) continue;
    for (const run of c.runs) {
      if (!dataExists(join(run, 'metrics.jsonl'))) continue;
      const cfg = readJson<Record<string, unknown>>(join(run, 'config.json'));
      const rows = readText(join(run, 'metrics.jsonl'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const monitor = new CollapseMonitor(collapseRuleOf(monitorOptions(cfg, given)));
      const alarms = rows.map((row) => monitor.observe(row)).filter((a) => a !== null);
      const code = cfg.model === 'default-code' || 'programsRun' in (rows[0] ?? {});
      const h = healthy(run, rows, code ? 'meanReward' : 'episodeReturn');
      runs++;
      if (alarms.length) flagged++;
      if (alarms.length && h.healthy) healthyFlagged++;
      if (alarms.length || given.verbose)
        console.log(
          `${run}: ${alarms.length ? alarms.map((a) => `fires at ${a!.iteration} (${a!.reason})`).join('; ') : 'quiet'} — ${h.healthy ? 'healthy' : 'not healthy'} (${h.why})`,
        );
    }
  }
  console.log(`${runs} runs; the monitor fires on ${flagged}; on ${healthyFlagged} healthy ones`);
  return healthyFlagged > 0 ? 1 : 0;
}

process.exitCode = main();
