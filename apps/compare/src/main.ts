#!/usr/bin/env node
// npm run compare -- --env virtualhome/food-preparation --algos poad,ntpo,twosome --seeds 3
// Runs every (algorithm or ablation setting) × seed with the training CLI, then writes
// report.md, summary.json and curves.svg/png (mean ± std over seeds) into one folder.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  formatHelp,
  lineChartSvg,
  OptionError,
  type OptionsSchema,
  parseArgs,
  resolveOptions,
  runName,
  svgToPng,
  writeFileAtomicSync,
  writeJsonAtomicSync,
} from '@poad/run-kit';
import { dataSciApp } from '@poad/train-datascicoding/src/spec.js';
import { overcookedApp } from '@poad/train-overcooked/src/spec.js';
import { virtualHomeApp } from '@poad/train-virtualhome/src/spec.js';
import { type AppSpec, runCli } from '@poad/trainer-cli';
import { type Group, groupCurve, markdown, summarise } from './report.js';

const APPS: Record<string, AppSpec> = {
  virtualhome: virtualHomeApp,
  overcooked: overcookedApp,
  datascicoding: dataSciApp,
};
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
    choices: ['poad', 'ntpo', 'twosome', 'archer'],
    default: ['poad', 'ntpo', 'twosome'],
    description: 'Algorithms to compare',
  },
  seeds: { type: 'integer', default: 3, min: 1, description: 'Seeds per setting (1..N)' },
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
    default: 'models/default',
    placeholder: 'dir',
    description: 'Model folder',
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
} satisfies OptionsSchema;

export async function compare(argv: readonly string[]): Promise<number> {
  const parsed = parseArgs(argv, schema);
  if (parsed.help) {
    process.stdout.write(
      formatHelp(schema, {
        usage: 'npm run compare -- [options]',
        summary:
          'Compare algorithms over seeds and write a report (curves, final returns, steps to 90% of the optimum, generalisation).',
      }),
    );
    return 0;
  }
  const o = resolveOptions(schema, parsed.explicit);
  const [family, ...rest] = o.env.split('/');
  const app = APPS[family!]!;
  const task = rest.join('/');
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
  const dir = resolve(o.out, runName(['compare', o.env.replace('/', '-')]));
  mkdirSync(dir, { recursive: true });
  const common = [
    `--${app.taskOption ?? 'task'}`,
    task,
    '--model',
    o.model,
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
  for (const s of settings) {
    const g: Group = { label: s.label, runDirs: [] };
    for (let seed = 1; seed <= o.seeds; seed++) {
      const name = `${s.label.replace(/[^A-Za-z0-9.]+/g, '-')}-s${seed}`;
      process.stderr.write(`\n=== ${s.label}, seed ${seed} ===\n`);
      const code = await runCli(app, [
        ...common,
        ...s.args,
        '--seed',
        String(seed),
        '--run-name',
        name,
      ]);
      if (code !== 0) throw new Error(`run ${name} failed with exit code ${code}`);
      g.runDirs.push(join(dir, name));
    }
    groups.push(g);
  }
  const optimum = app.optimalReturn?.(task);
  const summaries = groups.map((g) => summarise(g, task, optimum));
  for (const key of ['episodeReturn', 'successRate'] as const) {
    const svg = lineChartSvg({
      title: `${o.env}: ${key === 'episodeReturn' ? 'episodic return' : 'success rate'} (mean ± std over seeds)`,
      xLabel: 'environment steps',
      yLabel: key === 'episodeReturn' ? 'discounted return' : 'success rate',
      series: groups.map((g) => groupCurve(g, key)),
    });
    const base = key === 'episodeReturn' ? 'curves' : 'success';
    writeFileAtomicSync(join(dir, `${base}.svg`), svg);
    writeFileAtomicSync(join(dir, `${base}.png`), await svgToPng(svg));
  }
  const command = `npm run compare -- ${argv.join(' ')}`;
  writeJsonAtomicSync(join(dir, 'summary.json'), { env: o.env, command, optimum, summaries });
  writeFileAtomicSync(
    join(dir, 'report.md'),
    markdown(`Comparison on ${o.env}`, command, summaries, optimum),
  );
  process.stderr.write(`\nreport: ${join(dir, 'report.md')}\n`);
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
  }
}
