#!/usr/bin/env node
// npm run compare -- --env virtualhome/food-preparation --algos poad,ntpo,twosome --seeds 3
// Runs every (algorithm or ablation setting) × seed with the training CLI, then writes
// report.md, summary.json and curves.svg/png (mean ± std over seeds) into one folder. With
// --queue redis://HOST:PORT the runs go on a Redis queue instead, for `npm run compare -- worker`
// on any number of machines (queue-coordinator.ts, queue-worker.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { formatHelp, OptionError, type OptionsSchema, resolveOptions } from '@poad/config';
import {
  lineChartSvg,
  parseArgsWithConfig,
  runName,
  svgToPng,
  writeFileAtomicSync,
  writeJsonAtomicSync,
} from '@poad/run-kit';
import { checkRedis, parseQueueUrl } from '@poad/sweep-queue';
import { releaseBackend } from '@poad/tfjs-kernels';
import { type AppSpec, algorithmNames, type RunConfig, runCli, runConfigOf } from '@poad/trainer';
import { APPS, appOf, RUN_JOB } from './apps.js';
import {
  type Comparison,
  dataExists,
  findComparison,
  readJson,
  unpackArchive,
} from './archive-file.js';
import { type PriorReference, priorDatasetOf, readPrior } from './prior.js';
import { type FailedRun, queuedConfig, runOnQueue, sweepIdOf } from './queue-coordinator.js';
import { worker } from './queue-worker.js';
import {
  type Group,
  groupCurve,
  markdown,
  type ProgramSummary,
  pairwiseDifferences,
  programSummaryOf,
  summarise,
} from './report.js';
import { copyRun, finished, reusableRuns, reusedFrom, settingsKey } from './reuse.js';

const ENVS = Object.values(APPS).flatMap((a) => a.tasks.map((t) => a.envId(t)));

const schema = {
  env: {
    type: 'enum',
    choices: ENVS,
    default: 'virtualhome/food-preparation',
    description: 'Environment id',
  },
  algos: {
    type: 'list',
    choices: algorithmNames(),
    default: ['poad', 'ntpo', 'twosome'],
    description: "Algorithms to compare (those the environment's presets offer)",
  },
  seeds: {
    type: 'integer',
    default: 3,
    min: 1,
    description: 'Seeds per setting (first-seed .. first-seed + N − 1)',
  },
  firstSeed: {
    type: 'integer',
    default: 1,
    min: 0,
    description:
      'The first seed (e.g. 101 for tuning seeds kept apart from the evaluation seeds 1..N)',
  },
  intraGammas: {
    type: 'list',
    optional: true,
    description: 'Ablation: NTPO runs with each γ_w, e.g. 1,0.95,0.9,0.8',
  },
  gammas: {
    type: 'list',
    optional: true,
    description: 'Ablation: POAD and TWOSOME runs with each γ, e.g. 1,0.95',
  },
  model: {
    type: 'string',
    optional: true,
    placeholder: 'id|dir',
    description:
      "A Hugging Face Hub id (ORG/NAME[@REVISION], downloaded once into the shared Hub cache), a model folder, or an embedded model: 'default', 'informative-prior' (its variant with common sense), 'default-code' (the code model); unset: the training command's own default (default-code for DataSciCoding, default otherwise)",
  },
  backend: {
    type: 'enum',
    choices: ['auto', 'webgpu', 'tensorflow', 'wasm', 'cpu'],
    default: 'auto',
    description:
      'TF.js backend of every run (as the training commands: webgpu runs on the GPU through Dawn, and fails before any work without a usable adapter)',
  },
  envSteps: {
    type: 'integer',
    optional: true,
    min: 1,
    description: 'Env steps per run (default: the preset)',
  },
  maxIterations: {
    type: 'integer',
    optional: true,
    min: 1,
    description: 'Cap iterations per run (quick checks)',
  },
  evalEpisodes: {
    type: 'integer',
    default: 100,
    min: 1,
    description: 'Evaluation episodes per task at the end of each run',
  },
  out: {
    type: 'string',
    default: 'runs',
    placeholder: 'dir',
    description: 'Where the comparison folder goes',
  },
  extra: {
    type: 'string',
    optional: true,
    placeholder: '"--envs 4 ..."',
    description: 'More training options passed to every run',
  },
  jobs: {
    type: 'integer',
    default: 1,
    min: 1,
    max: 64,
    description:
      'Runs at once; above 1 each run is a child process logging to <run>.log, with the CPU threads shared out',
  },
  resume: {
    type: 'string',
    optional: true,
    placeholder: 'compare-dir',
    description:
      'Continue an interrupted comparison in this folder: finished runs are kept, cut-off runs resume from their checkpoint. An archive (npm run archive -w @poad/compare) is read as it is: it continues in a folder of its name under --out (default runs/), unpacked from it first, and --report-only reports on it into that folder',
  },
  reuse: {
    type: 'list',
    optional: true,
    description:
      'Copy in finished runs from these earlier comparison folders (or their archives) when their training settings and seed equal a run of this one, instead of training it again',
  },
  combine: {
    type: 'list',
    optional: true,
    description:
      "Report side by side on the finished runs of these comparison folders or archives (one environment; each setting labelled with its folder's --extra, e.g. 'twosome --advantage-normalisation chunk:4') in a new folder under --out, with every pair's intervals and p-values; trains nothing",
  },
  prior: {
    type: 'string',
    optional: true,
    placeholder: 'prior.json',
    description:
      "DataSciCoding: the untrained model's programs (the JSON of npm run prior -w @poad/train-datascicoding) to set beside the runs: a row of the programs table, a dashed line on its charts, and each setting's last 5 iterations against it (also with --resume, --report-only and --combine)",
  },
  queue: {
    type: 'string',
    optional: true,
    placeholder: 'redis://host:port[/db]',
    description:
      'Put the runs on this Redis queue for workers on any machines (npm run compare -- worker --queue URL) instead of training them here; each finished run comes back into the comparison folder (as npm run archive keeps it) and the report is the same. Ctrl-C leaves the queue as it is; --resume reattaches',
  },
  checkpoint: {
    type: 'enum',
    choices: ['latest', 'best'],
    default: 'latest',
    description:
      "Which checkpoint's final evaluation the report's greedy figures and tests use: latest, or best (a run's --keep-best checkpoint, eval.json's best; a run whose best is its latest counts its latest)",
  },
  reportOnly: {
    type: 'boolean',
    default: false,
    description:
      'With --resume: write the report from the runs finished so far and start nothing (a run still going elsewhere is left out)',
  },
} satisfies OptionsSchema;

/** One training run of the comparison. */
interface Job {
  name: string;
  label: string;
  args: string[];
}

const started = (runDir: string): boolean =>
  existsSync(join(runDir, 'checkpoints')) &&
  readdirSync(join(runDir, 'checkpoints')).some((d) => !d.startsWith('.'));

/** Arguments that run (or continue) one job in `dir`. */
function jobArgs(job: Job, common: string[], dir: string): string[] {
  const runDir = join(dir, job.name);
  // --resume restores every option from the run's own config; only the output settings repeat.
  if (started(runDir)) return ['--resume', runDir, '--quiet'];
  return [...common, ...job.args, '--run-name', job.name];
}

/**
 * Ctrl-C or SIGTERM while runs are going: no new run starts, and each running one gets the signal
 * (forwarded to child processes, which ignore a copy within a second of the terminal's own), so
 * it saves a checkpoint and stops; a second signal stops them at once. `--resume` continues.
 */
class Interrupt {
  requested = false;
  readonly children = new Set<ChildProcess>();
  private count = 0;
  private firstAt = 0;
  private readonly handler = (signal: NodeJS.Signals) => {
    if (this.count > 0 && Date.now() - this.firstAt < 1000) return;
    this.count++;
    if (this.count === 1) {
      this.requested = true;
      this.firstAt = Date.now();
      process.stderr.write(
        `\n${signal}: the running trainings save a checkpoint and stop; no new run starts (press again to stop them at once)\n`,
      );
    }
    for (const c of this.children) c.kill(signal);
  };

  constructor() {
    process.on('SIGINT', this.handler);
    process.on('SIGTERM', this.handler);
  }

  dispose(): void {
    process.off('SIGINT', this.handler);
    process.off('SIGTERM', this.handler);
  }
}

/** Exit code of a training command that was interrupted and saved its checkpoint. */
const INTERRUPTED = 130;

async function runInProcess(
  app: AppSpec,
  job: Job,
  args: string[],
  stop: Interrupt,
): Promise<void> {
  process.stderr.write(`\n=== ${job.label} (${job.name}) ===\n`);
  const code = await runCli(app, args);
  if (code === INTERRUPTED && stop.requested) return;
  if (code !== 0) throw new Error(`run ${job.name} failed with exit code ${code}`);
}

function runChild(
  env: string,
  job: Job,
  args: string[],
  dir: string,
  threads: number,
  stop: Interrupt,
) {
  const logFile = join(dir, `${job.name}.log`);
  const log = createWriteStream(logFile, { flags: 'a' });
  process.stderr.write(`started ${job.label} (${job.name}), log: ${logFile}\n`);
  return new Promise<void>((ok, fail) => {
    // The same training command as a run in this process, in a process of its own.
    const child = spawn(process.execPath, ['--import', 'tsx', RUN_JOB, env, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { POAD_NATIVE_THREADS: String(threads), ...process.env },
    });
    stop.children.add(child);
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.on('error', fail);
    child.on('close', (code) => {
      stop.children.delete(child);
      log.end();
      if (code === 0) {
        process.stderr.write(`finished ${job.label} (${job.name})\n`);
        ok();
      } else if (code === INTERRUPTED && stop.requested) {
        process.stderr.write(`stopped ${job.label} (${job.name}) after its checkpoint\n`);
        ok();
      } else fail(new Error(`run ${job.name} failed with exit code ${code}; see ${logFile}`));
    });
  });
}

/** Run `jobs` with at most `n` at once; the first failure stops new starts and is rethrown. */
async function pool(
  jobs: Job[],
  n: number,
  stop: Interrupt,
  run: (j: Job) => Promise<void>,
): Promise<void> {
  const queue = [...jobs];
  let failure: unknown = null;
  const worker = async () => {
    while (queue.length > 0 && failure === null && !stop.requested) {
      const job = queue.shift()!;
      try {
        await run(job);
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, jobs.length) }, worker));
  if (failure !== null) throw failure;
}

type Options = ReturnType<typeof resolveOptions<typeof schema>>;

/** The settings a comparison trains (algorithms, or an ablation's values), each by its label. */
function settingsOf(o: Options): { label: string; args: string[] }[] {
  const settings: { label: string; args: string[] }[] = [];
  if (o.intraGammas || o.gammas) {
    for (const g of o.intraGammas ?? [])
      settings.push({ label: `ntpo γw=${g}`, args: ['--algo', 'ntpo', '--intra-gamma', g] });
    for (const g of o.gammas ?? []) {
      for (const algo of ['poad', 'twosome'])
        settings.push({ label: `${algo} γ=${g}`, args: ['--algo', algo, '--gamma', g] });
    }
  } else {
    for (const algo of o.algos) settings.push({ label: algo, args: ['--algo', algo] });
  }
  return settings;
}

/** The run folder name of a setting's seed inside its comparison folder. */
const runNameOf = (label: string, seed: number): string =>
  `${label.replace(/[^A-Za-z0-9.]+/g, '-')}-s${seed}`;

/**
 * The `--prior` of a comparison on `env` whose runs got `extra`, read and checked before anything
 * trains (undefined without `--prior`).
 */
function priorOf(
  file: string | undefined,
  env: string,
  extra: string | undefined,
): PriorReference | undefined {
  if (file === undefined) return undefined;
  const [family, ...rest] = env.split('/');
  if (family !== 'datascicoding') {
    throw new OptionError(
      `--prior: only DataSciCoding comparisons have a prior of programs, and this one is on ${env}; leave --prior out`,
    );
  }
  return readPrior(file, priorDatasetOf(rest.join('/'), extra));
}

/**
 * The comparison `path` names (a folder, an archive, or a folder since archived: see
 * findComparison), or the folder `path` as it is when it is none (refused by `savedArgv`).
 */
const comparisonAt = (path: string): Comparison =>
  findComparison(path) ?? { root: path, name: basename(resolve(path)), archived: false };

/** The command-line arguments a comparison (folder or archive) was started with (its compare.json). */
function savedArgv(dir: string, flag: string): string[] {
  const saved = join(resolve(dir), 'compare.json');
  if (!dataExists(saved)) {
    throw new OptionError(
      `${flag} ${dir}: no compare.json there; pass a folder written by npm run compare, or its archive`,
    );
  }
  return readJson<{ argv: string[] }>(saved).argv;
}

/**
 * `--combine`: one report over the finished runs of several comparisons of one environment
 * (e.g. the algorithms at their presets and a variant of one of them run separately with
 * `--extra`), each setting labelled with its folder's `--extra`.
 */
async function combine(o: Options, argv: readonly string[]): Promise<number> {
  if (o.resume || o.reportOnly) {
    throw new OptionError(
      '--combine writes a new report folder; it cannot be used with --resume or --report-only',
    );
  }
  let env: string | undefined;
  let firstExtra: string | undefined;
  const groups: Group[] = [];
  for (const d of o.combine ?? []) {
    const source = comparisonAt(d);
    const dir = resolve(source.root);
    const theirArgv = savedArgv(source.archived ? source.root : d, '--combine');
    const theirs = resolveOptions(schema, (await parseArgsWithConfig(theirArgv, schema)).explicit);
    if (env !== undefined && theirs.env !== env) {
      throw new OptionError(
        `--combine: ${d} compares on ${theirs.env}, the first folder on ${env}; combine comparisons of one environment`,
      );
    }
    if (env === undefined) firstExtra = theirs.extra;
    env = theirs.env;
    const extra = theirs.extra?.trim();
    for (const s of settingsOf(theirs)) {
      const runDirs: string[] = [];
      for (let seed = theirs.firstSeed; seed < theirs.firstSeed + theirs.seeds; seed++)
        runDirs.push(join(dir, runNameOf(s.label, seed)));
      const done = runDirs.filter(finished);
      if (done.length === 0) continue;
      let label = extra ? `${s.label} ${extra}` : s.label;
      if (groups.some((g) => g.label === label)) label = `${label} (${source.name})`;
      groups.push({ label, runDirs: done });
    }
  }
  if (env === undefined || groups.length === 0)
    throw new OptionError('--combine: no finished run in these folders');
  const prior = priorOf(o.prior, env, firstExtra);
  const [, ...rest] = env.split('/');
  const out = resolve(o.out, runName(['combined', env.replace('/', '-')]));
  mkdirSync(out, { recursive: true });
  writeJsonAtomicSync(join(out, 'combine.json'), {
    argv,
    folders: o.combine,
  });
  await writeReport(
    out,
    env,
    appOf(env),
    rest.join('/'),
    groups,
    `npm run compare -- ${argv.join(' ')}`,
    prior,
    [],
    o.checkpoint as 'latest' | 'best',
  );
  return 0;
}

/** The prior's value on one of the program charts (null: it has none, e.g. no program ran). */
function priorLevel(
  prior: PriorReference,
  key: 'meanReward' | 'programsRun' | 'bestReward',
): { name: string; value: number } | null {
  const n = prior.samples;
  if (key === 'meanReward') return { name: `prior (${n} programs)`, value: prior.meanReward };
  if (key === 'programsRun') return { name: `prior (${n} programs)`, value: prior.ran };
  return prior.bestAuc === null ? null : { name: `prior: best of ${n}`, value: prior.bestAuc };
}

/** report.md, summary.json and the curves (mean ± std over seeds) of `groups` into `dir`. */
async function writeReport(
  dir: string,
  env: string,
  app: AppSpec,
  task: string,
  groups: Group[],
  command: string,
  prior?: PriorReference,
  failed: readonly FailedRun[] = [],
  checkpoint: 'latest' | 'best' = 'latest',
): Promise<void> {
  const failedSection = failed.length
    ? [
        '',
        '## Failed runs',
        '',
        'These runs failed on the queue and are not in the tables above; `--resume` queues them again.',
        '',
        ...failed.map((f) => `- ${f.label} (${f.name}): ${f.reason}`),
        '',
      ].join('\n')
    : '';
  if (groups.length === 0) {
    // Every run failed: the report names them and nothing else.
    writeJsonAtomicSync(join(dir, 'summary.json'), { env, command, failed });
    writeFileAtomicSync(
      join(dir, 'report.md'),
      `# Comparison on ${env}\n\nCommand: \`${command}\`\n${failedSection}`,
    );
    process.stderr.write(`\nreport: ${join(dir, 'report.md')}\n`);
    return;
  }
  const optimum = app.optimalReturn?.(task);
  const summaries = groups.map((g) => summarise(g, task, optimum, checkpoint));
  for (const key of ['episodeReturn', 'successRate'] as const) {
    const svg = lineChartSvg({
      title: `${env}: ${key === 'episodeReturn' ? 'episodic return' : 'success rate'} (mean ± std over seeds)`,
      xLabel: 'environment steps',
      yLabel: key === 'episodeReturn' ? 'discounted return' : 'success rate',
      series: groups.map((g) => groupCurve(g, key)),
    });
    const base = key === 'episodeReturn' ? 'curves' : 'success';
    writeFileAtomicSync(join(dir, `${base}.svg`), svg);
    writeFileAtomicSync(join(dir, `${base}.png`), await svgToPng(svg));
  }
  // DataSciCoding runs also log their programs' mean reward, share that ran and best reward.
  const programs = groups
    .map((g, i) =>
      programSummaryOf(
        g.label,
        summaries[i]!.runs.map((r) => r.programs),
      ),
    )
    .filter((p): p is ProgramSummary => p !== null);
  if (programs.length === groups.length && groups.length > 0) {
    const charts = {
      meanReward: ['mean-reward', 'mean reward of the sampled programs (failure −1)', 'reward'],
      programsRun: ['programs-run', 'share of programs that ran', 'share'],
      bestReward: ['best-reward', 'best reward so far', 'ROC AUC'],
    } as const;
    for (const [key, [base, title, yLabel]] of Object.entries(charts)) {
      const series = groups.map((g) => groupCurve(g, key as keyof typeof charts));
      const level = prior && priorLevel(prior, key as keyof typeof charts);
      if (level) {
        // The prior as a dashed level across the runs' steps.
        const xs = series.flatMap((c) => c.points.map(([x]) => x));
        series.push({
          name: level.name,
          points: [
            [Math.min(...xs), level.value],
            [Math.max(...xs), level.value],
          ],
          color: '#555555',
          dashed: true,
        });
      }
      const svg = lineChartSvg({
        title: `${env}: ${title} (mean ± std over seeds)`,
        xLabel: 'environment steps',
        yLabel,
        series,
      });
      writeFileAtomicSync(join(dir, `${base}.svg`), svg);
      writeFileAtomicSync(join(dir, `${base}.png`), await svgToPng(svg));
    }
  }
  const reused = reusedFrom(groups.flatMap((g) => g.runDirs));
  // Computed once for summary.json and report.md (exact tests can enumerate ~10⁶ splits each).
  const differences = pairwiseDifferences(summaries);
  writeJsonAtomicSync(join(dir, 'summary.json'), {
    env,
    command,
    optimum,
    summaries,
    differences,
    reused,
    programs,
    ...(prior ? { prior } : {}),
    ...(failed.length ? { failed } : {}),
  });
  writeFileAtomicSync(
    join(dir, 'report.md'),
    markdown(
      `Comparison on ${env}`,
      command,
      summaries,
      optimum,
      reused,
      programs,
      prior,
      differences,
    ) + failedSection,
  );
  process.stderr.write(`\nreport: ${join(dir, 'report.md')}\n`);
}

export async function compare(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'worker') return worker(argv.slice(1));
  const parsed = await parseArgsWithConfig(argv, schema);
  if (parsed.help) {
    process.stdout.write(
      formatHelp(schema, {
        usage: 'npm run compare -- [options]   (npm run compare -- worker --help: a queue worker)',
        summary:
          'Compare algorithms over seeds and write a report (curves, final returns, steps to 90% of the optimum, generalisation).',
      }),
    );
    return 0;
  }
  let o = resolveOptions(schema, parsed.explicit, { sources: parsed.sources });
  if (o.combine) return combine(o, argv);
  let original = argv;
  let source: Comparison | undefined;
  if (o.resume) {
    // The comparison's own options come from the folder; only --jobs, --queue and --prior may
    // change (and --out, where an archive's report or continued folder goes).
    source = comparisonAt(o.resume);
    original = savedArgv(source.archived ? source.root : o.resume, '--resume');
    const again = (await parseArgsWithConfig(original, schema)).explicit;
    o = resolveOptions(schema, {
      ...again,
      ...(parsed.explicit.jobs === undefined ? {} : { jobs: parsed.explicit.jobs }),
      ...(parsed.explicit.queue === undefined ? {} : { queue: parsed.explicit.queue }),
      ...(parsed.explicit.prior === undefined ? {} : { prior: parsed.explicit.prior }),
      out: parsed.explicit.out ?? schema.out.default,
      resume: o.resume,
      reportOnly: o.reportOnly,
    });
  } else if (o.reportOnly) {
    throw new OptionError('--report-only needs --resume COMPARE_DIR (the comparison to report on)');
  }
  // A malformed --queue is refused before anything else.
  const queue = o.queue === undefined ? undefined : parseQueueUrl(o.queue);
  const [, ...rest] = o.env.split('/');
  const app = appOf(o.env);
  const task = rest.join('/');
  // A bad --prior is refused before anything trains.
  const prior = priorOf(o.prior, o.env, o.extra);
  const settings = settingsOf(o);
  // Where the runs are, and where the report goes: the same folder, but for --report-only on an
  // archive, which is read as it is and reported on into a folder of its name under --out.
  let dir = o.resume
    ? resolve(o.resume)
    : resolve(o.out, runName(['compare', o.env.replace('/', '-')]));
  let reportDir = dir;
  if (source?.archived) {
    reportDir = resolve(o.out, source.name);
    if (o.reportOnly) {
      dir = resolve(source.root);
      if (existsSync(join(reportDir, 'compare.json'))) {
        throw new OptionError(
          `--report-only ${o.resume}: ${reportDir} holds the comparison continued from this archive; report on it with --resume ${reportDir} --report-only, or pass another --out`,
        );
      }
    } else {
      dir = reportDir;
      // An unreachable queue is refused before the archive is unpacked.
      if (queue) await checkRedis(queue);
      // The archive goes on in a folder of its own: unpacked once, continued from then on.
      if (existsSync(join(dir, 'compare.json'))) {
        process.stderr.write(`continuing ${source.root} in ${dir} (unpacked from it earlier)\n`);
      } else {
        unpackArchive(source.root, dir);
        process.stderr.write(
          `unpacked ${source.root} into ${dir} to continue it there (archive it again with: npm run archive -w @poad/compare -- ${dir} ${source.root})\n`,
        );
      }
    }
  }
  const common = [
    `--${app.taskOption ?? 'task'}`,
    task,
    ...(o.model ? ['--model', o.model] : []),
    '--backend',
    o.backend,
    '--runs',
    dir,
    '--quiet',
    '--eval-episodes',
    String(o.evalEpisodes),
    ...(o.envSteps ? ['--env-steps', String(o.envSteps)] : []),
    ...(o.maxIterations ? ['--max-iterations', String(o.maxIterations)] : []),
    ...(o.extra ? o.extra.split(/\s+/).filter(Boolean) : []),
  ];
  const groups: Group[] = [];
  const jobs: Job[] = [];
  for (const s of settings) {
    const g: Group = { label: s.label, runDirs: [] };
    for (let seed = o.firstSeed; seed < o.firstSeed + o.seeds; seed++) {
      const name = runNameOf(s.label, seed);
      g.runDirs.push(join(dir, name));
      jobs.push({
        name,
        label: `${s.label}, seed ${seed}`,
        args: [...s.args, '--seed', String(seed)],
      });
    }
    groups.push(g);
  }
  let todo = jobs.filter((j) => !finished(join(dir, j.name)));
  // Every run's command line is resolved now, so a flag one of the algorithms does not take
  // (e.g. an --extra option of another one) stops the comparison before anything trains.
  const resolved = new Map<Job, RunConfig>();
  if (!o.reportOnly) {
    for (const job of todo) {
      try {
        resolved.set(job, await runConfigOf(app, jobArgs(job, common, dir)));
      } catch (err) {
        if (err instanceof Error && /Error$/.test(err.name))
          throw new OptionError(`${job.label}: ${err.message}`);
        throw err;
      }
    }
  }
  // An unreachable queue is refused before anything is written.
  if (queue && !o.reportOnly && !source?.archived) await checkRedis(queue);
  mkdirSync(reportDir, { recursive: true });
  if (!o.resume) writeJsonAtomicSync(join(dir, 'compare.json'), { argv: original });
  if (!o.reportOnly && !queue) {
    // A run cut off before its first checkpoint has nothing to resume from: it starts again.
    for (const job of todo) {
      const runDir = join(dir, job.name);
      if (existsSync(runDir) && !started(runDir)) {
        rmSync(runDir, { recursive: true, force: true });
        process.stderr.write(`starting ${job.label} (${job.name}) again: it had no checkpoint\n`);
      }
    }
  }
  if (o.reuse && !o.reportOnly) {
    // Runs already under way here continue; the others may come from the earlier folders.
    const fresh = todo.filter((j) => !started(join(dir, j.name)));
    const candidates = fresh.length ? reusableRuns(app, o.reuse) : [];
    const copied = new Set<Job>();
    for (const job of fresh) {
      const runDir = join(dir, job.name);
      const rc = await runConfigOf(app, jobArgs(job, common, dir));
      const key = settingsKey(rc);
      const match = candidates.find((c) => c.key === key);
      if (match) {
        copyRun(match.dir, runDir, rc);
        process.stderr.write(`reused ${job.label} (${job.name}) from ${match.dir}\n`);
        copied.add(job);
      }
    }
    todo = todo.filter((j) => !copied.has(j));
  }
  if (todo.length < jobs.length) {
    process.stderr.write(
      `${jobs.length - todo.length} of ${jobs.length} runs already finished in ${dir}\n`,
    );
  }
  let failed: FailedRun[] = [];
  if (o.reportOnly) {
    // Only finished runs count; a setting without any is left out of the report.
    for (const g of groups) g.runDirs = g.runDirs.filter(finished);
    groups.splice(0, groups.length, ...groups.filter((g) => g.runDirs.length > 0));
    if (groups.length === 0) throw new OptionError(`--report-only: no finished run in ${dir} yet`);
  } else if (queue) {
    const extra = (o.extra ?? '').split(/\s+/);
    const threadsFixed = extra.some((t) => t === '--threads' || t.startsWith('--threads='));
    const outcome = await runOnQueue({
      url: queue,
      sweep: sweepIdOf(dir),
      dir,
      runs: todo.map((job) => ({
        name: job.name,
        label: job.label,
        payload: { env: o.env, config: queuedConfig(resolved.get(job)!, threadsFixed) },
      })),
      done: jobs.length - todo.length,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    if (outcome.interrupted) {
      const done = jobs.filter((j) => finished(join(dir, j.name))).length;
      process.stderr.write(
        `interrupted with ${done} of ${jobs.length} runs finished; the others stay on the queue; reattach with: npm run compare -- --resume ${dir}\n`,
      );
      return INTERRUPTED;
    }
    failed = outcome.failed;
    // The report is of the runs that finished; the failed ones are named in it.
    for (const g of groups) g.runDirs = g.runDirs.filter(finished);
    groups.splice(0, groups.length, ...groups.filter((g) => g.runDirs.length > 0));
  } else {
    const threads = Math.max(1, Math.floor(availableParallelism() / o.jobs));
    const stop = new Interrupt();
    try {
      await pool(todo, o.jobs, stop, (job) =>
        o.jobs === 1
          ? runInProcess(app, job, jobArgs(job, common, dir), stop)
          : runChild(o.env, job, jobArgs(job, common, dir), dir, threads, stop),
      );
    } finally {
      stop.dispose();
    }
    if (stop.requested) {
      const done = jobs.filter((j) => finished(join(dir, j.name))).length;
      process.stderr.write(
        `interrupted with ${done} of ${jobs.length} runs finished; continue with: npm run compare -- --resume ${dir}\n`,
      );
      return INTERRUPTED;
    }
  }
  const resumed = source?.archived ? source.name : basename(dir);
  const command = `npm run compare -- ${original.join(' ')}${o.resume ? ` (then --resume ${resumed}${o.reportOnly ? ' --report-only: finished runs only' : ''})` : ''}`;
  await writeReport(
    reportDir,
    o.env,
    app,
    task,
    groups,
    command,
    prior,
    failed,
    o.checkpoint as 'latest' | 'best',
  );
  if (failed.length) {
    process.stderr.write(
      `${failed.length} of ${jobs.length} runs failed (named in the report); fix the cause and queue them again with: npm run compare -- --resume ${dir}\n`,
    );
    return 1;
  }
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    process.exitCode = await compare(process.argv.slice(2));
  } catch (err) {
    if (err instanceof OptionError) {
      process.stderr.write(`error: ${err.message}\n`);
      process.exitCode = 2;
    } else throw err;
  } finally {
    // Runs made in this process (--jobs 1) leave the GPU device open on webgpu.
    await releaseBackend();
  }
}
