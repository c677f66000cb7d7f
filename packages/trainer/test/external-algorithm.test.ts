// Adding an algorithm from one module outside the repository's packages, as
// docs/adding-an-algorithm.md describes it. The module, test/fixtures/external-algorithm/reinforce.ts
// (REINFORCE with a running-mean baseline), is copied into a project of its own: a temporary
// folder whose node_modules holds the published packages and nothing else, so that it resolves
// only their public entries (a relative import into packages/ would not resolve from there). It
// is imported from there, registered with registerAlgorithm of @poad/trainer, and trained through
// the `poad` command (runCli on a registered environment) and train() on every registered
// environment that offers it; the installed bin takes it too, with --env-module. No file of the repository besides this test and that module was
// written or edited for it: the registry, the command line and its help, the run directory,
// resume, the settings compare matches runs by and the refusals take it as they take a built-in.
// Like the project, this file imports @poad/trainer by its name: the package's dist (turbo builds
// it before the package's tests; after editing src/, rebuild it before running this file alone).
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { captureStdout, TINY_RUN, trainingHarness } from '@poad/dev-kit';
import { listEnvs } from '@poad/envs-core';
import {
  type AlgorithmEntry,
  algorithmEntry,
  algorithmNames,
  flatRunConfig,
  loadEnvironments,
  loadRunConfig,
  offeredAlgorithms,
  poadMain,
  registerAlgorithm,
  registeredApp,
  resolveRun,
  runSettings,
  type TrainOptions,
  train,
} from '@poad/trainer';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { tinyModelDir } from './tiny-model.js';

const repo = new URL('../../..', import.meta.url).pathname;
const source = new URL('./fixtures/external-algorithm/reinforce.ts', import.meta.url).pathname;
/** What the module may import: the published packages' entries (and TF.js for its loss). */
const PUBLISHED = ['@poad/trainer', '@poad/ppo', '@poad/config', '@poad/bellman'];
const INSTALLED = [
  ...PUBLISHED,
  '@tensorflow/tfjs-core',
  // The environments a user of the `poad` command installs beside it.
  '@poad/envs-virtualhome',
  '@poad/envs-overcooked',
  '@poad/envs-credit',
  '@poad/envs-datascicoding',
];

/** A project outside the repository: package.json, node_modules of the installed packages, the module. */
function outsideProject(): string {
  const dir = mkdtempSync(join(tmpdir(), 'poad-own-algorithm-'));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'my-algorithm', private: true, type: 'module' }),
  );
  for (const name of INSTALLED) {
    const link = join(dir, 'node_modules', name);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(join(repo, 'node_modules', name), link, 'dir');
  }
  copyFileSync(source, join(dir, 'reinforce.ts'));
  return dir;
}

const tinyRun = TINY_RUN.filter((a, i) => a !== '--epochs' && TINY_RUN[i - 1] !== '--epochs');
let project = '';
let model = '';
let reinforce: AlgorithmEntry;
const said: string[] = [];
const ctx = {
  get cwd() {
    return project;
  },
  out: (text: string) => void said.push(text),
  log: (line: string) => void process.stderr.write(`${line}\n`),
};
const h = trainingHarness({
  inProcess: (argv) => poadMain(argv, ctx),
  // The tiny run without --epochs (REINFORCE makes one pass over each rollout: no such field),
  // its perplexity measured on a few held-out lines.
  base: () => [
    '--model',
    model,
    ...tinyRun,
    '--backend',
    'wasm',
    '--threads',
    '1',
    '--perplexity-lines',
    '4',
  ],
  async setup() {
    project = outsideProject();
    const mod = (await import(join(project, 'reinforce.ts'))) as { reinforce: AlgorithmEntry };
    reinforce = mod.reinforce;
    registerAlgorithm(reinforce);
    await loadEnvironments(project, undefined);
    model = await tinyModelDir();
  },
  teardown() {
    rmSync(project, { recursive: true, force: true });
    rmSync(join(model, '..'), { recursive: true, force: true });
  },
});
const VH = 'virtualhome/food-preparation';
/** A task whose first rollouts already earn rewards, so that the baseline moves. */
const KEY = 'credit/key-token';
const train1 = (env: string, name: string, iterations: number, extra: string[] = []) =>
  h.run(['train', '--env', env, ...h.args(name, iterations, ['--algo', 'reinforce', ...extra])]);
const iterDir = (name: string, it: number) =>
  join(h.dir(name), 'checkpoints', `iter-${String(it).padStart(8, '0')}`);
/** The environments whose traits meet the algorithm's needs. */
const offering = () =>
  listEnvs().filter((id) => offeredAlgorithms(registeredApp(id)).includes('reinforce'));

describe('an algorithm from a module outside the packages', () => {
  it('imports nothing but the published packages, and registers as one more algorithm', () => {
    const text = readFileSync(source, 'utf8');
    const imports = [...text.matchAll(/^import[^;]*?from '([^']+)';/gms)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    for (const name of imports) expect([...PUBLISHED, '@tensorflow/tfjs-core']).toContain(name);
    expect(algorithmNames()).toContain('reinforce');
    expect(algorithmEntry('reinforce')).toBe(reinforce);
    // needs: labels. Every environment with labelled actions offers it; DataSciCoding writes code.
    const all = listEnvs();
    expect(all).toEqual(expect.arrayContaining([VH, 'overcooked/tomato-salad', 'credit/loop']));
    expect(offering()).toEqual(all.filter((id) => !id.startsWith('datascicoding/')));
  });

  it('`poad envs` lists it where it is offered', async () => {
    expect(await poadMain(['envs'], ctx)).toBe(0);
    const text = said.splice(0).join('');
    expect(text).toMatch(/virtualhome\/food-preparation +labels.* gigpo reinforce/);
    expect(text).toMatch(/credit\/key-token +labels.* reinforce/);
    expect(text).toMatch(
      /datascicoding\/iris +text, seeded resets +poad ntpo etpo grpo rloo gigpo +Write/,
    );
  });

  it('--algo reinforce --help lists its fields, with the preset over its defaults', async () => {
    const { result, text: help } = await captureStdout(() =>
      poadMain(['train', '--env', VH, '--algo', 'reinforce', '--help'], ctx),
    );
    expect(result).toBe(0);
    expect(help).toContain(`reinforce ${reinforce.summary}`);
    expect(help).toContain('Algorithm reinforce (its config');
    expect(help).toMatch(/--baseline-rate .*α of the running-mean baseline/);
    expect(help).toMatch(/--entropy-coef .*label distribution/);
    // The preset's learning rate (VirtualHome small) over the schema's 1e-6.
    expect(help).toMatch(/--lr <num> .*\(default: 0\.0005\)/);
    // PPO's fields it did not pick are not its flags.
    expect(help).not.toContain('--critic-lr');
    expect(help).not.toContain('--clip ');
  });

  it('trains into a complete run directory that resumes bit for bit, its baseline included', async () => {
    const a = await train1(KEY, 'straight', 2, ['--baseline-rate', '0.5']);
    expect(a.code, a.out).toBe(0);
    const dir = h.dir('straight');
    const config = h.json('straight', 'config.json');
    expect(config).toMatchObject({ algo: 'reinforce', task: KEY, baselineRate: 0.5 });
    for (const k of ['criticLr', 'clip', 'gaeLambda']) expect(k in config, k).toBe(false);
    for (const f of ['metrics.jsonl', 'metrics.csv', 'learning-curve.svg', 'perplexity.json'])
      expect(existsSync(join(dir, f)), f).toBe(true);
    expect(readFileSync(join(dir, 'token-credit.svg'), 'utf8')).toContain('return − baseline');
    const rows = h.rows('straight');
    expect(rows.map((r) => r.iteration)).toEqual([1, 2]);
    for (const r of rows) {
      for (const k of ['policyLoss', 'entropy', 'approxKl', 'actorGradNorm', 'meanReturn'])
        expect(Number.isFinite(r[k]), k).toBe(true);
      // The label distribution's entropy: between 0 and log(number of labels).
      expect(r.entropy).toBeGreaterThan(0);
      expect(r.minibatches).toBe(2);
    }
    // The report's own columns: the running mean starts at 0 and moves half way (α = 0.5)
    // towards the first rollout's mean return, which rewards made non-zero.
    expect(rows[0]!.baseline).toBe(0);
    expect(rows[0]!.meanReturn).not.toBe(0);
    expect(rows[1]!.baseline).toBeCloseTo(0.5 * rows[0]!.meanReturn!, 12);
    const cp = iterDir('straight', 2);
    expect(existsSync(join(cp, 'model', 'adapter_model.safetensors'))).toBe(true);
    expect(existsSync(join(cp, 'model', 'value_head.safetensors'))).toBe(false);
    const state = JSON.parse(readFileSync(join(cp, 'trainer.json'), 'utf8'));
    expect(state).toMatchObject({ format: 'reinforce-checkpoint', counters: { iterations: 2 } });
    expect(state.baseline).toBeCloseTo(
      rows[1]!.baseline! + 0.5 * (rows[1]!.meanReturn! - rows[1]!.baseline!),
      12,
    );

    // --max-iterations stops it after one; --resume continues to the same numbers and files.
    const b = await train1(KEY, 'pieces', 1, ['--baseline-rate', '0.5']);
    expect(b.code, b.out).toBe(0);
    const c = await h.run([
      'train',
      '--resume',
      h.dir('pieces'),
      '--max-iterations',
      '2',
      '--quiet',
    ]);
    expect(c.code, c.out).toBe(0);
    expect(h.rows('pieces')).toEqual(rows);
    // Every file of the checkpoint but meta.json (its wall time) is the same, byte for byte.
    const files = readdirSync(cp, { recursive: true })
      .map(String)
      .filter((f) => f.includes('.') && f !== 'meta.json')
      .sort();
    expect(files).toEqual([
      'env.json',
      join('model', 'adapter_config.json'),
      join('model', 'adapter_model.safetensors'),
      'trainer.json',
      'trainer.safetensors',
    ]);
    for (const f of files) {
      const x = readFileSync(join(iterDir('pieces', 2), f));
      expect(x.equals(readFileSync(join(cp, f))), f).toBe(true);
    }
  });

  it('trains on every other environment that offers it: VirtualHome, Overcooked, the credit tasks', async () => {
    const others = offering().filter((id) => id !== KEY);
    expect(others.length).toBeGreaterThanOrEqual(15);
    for (const id of others) {
      const name = id.replaceAll('/', '-');
      const r = await train1(id, name, 1);
      expect(r.code, `${id}: ${r.out}`).toBe(0);
      const [row] = h.rows(name);
      expect(row!.baseline, id).toBe(0);
      expect(Number.isFinite(row!.policyLoss), id).toBe(true);
      expect(h.json(name, 'config.json'), id).toMatchObject({ algo: 'reinforce', task: id });
    }
  });

  it('differentiates the distribution the sampler acted with, in both token spaces', async () => {
    // One minibatch: its log-probs are computed before the only step, from the policy that acted,
    // so that the approximate KL to the stored ones is 0 up to float rounding.
    for (const space of ['vocabulary', 'labels']) {
      const name = `one-minibatch-${space}`;
      const r = await train1('credit/loop', name, 1, [
        '--num-minibatches',
        '1',
        '--token-space',
        space,
      ]);
      expect(r.code, r.out).toBe(0);
      const [row] = h.rows(name);
      expect(row!.minibatches).toBe(1);
      expect(Math.abs(row!.approxKl!), space).toBeLessThan(1e-5);
      expect(row!.actorGradNorm, space).toBeGreaterThan(0);
    }
  });

  it('the installed `poad` command takes it with --env-module, in a process of its own', async () => {
    // The bin of the installed package, as `npx poad` runs it from the project (tsx only to
    // import the module's TypeScript); the module's register() adds the algorithm.
    const bin = join(project, 'node_modules', '@poad', 'trainer', 'dist', 'bin', 'poad.js');
    const args = h.args('bin', 1, ['--algo', 'reinforce']);
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href,
        bin,
        'train',
        '--env',
        'credit/loop',
        '--env-module',
        'reinforce.ts',
        ...args,
      ],
      { cwd: project, encoding: 'utf8', timeout: 300_000 },
    );
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
    expect(h.json('bin', 'config.json')).toMatchObject({ algo: 'reinforce', task: 'credit/loop' });
    // The same numbers as the same run in this process.
    const here = await train1('credit/loop', 'in-process', 1);
    expect(here.code, here.out).toBe(0);
    expect(h.rows('bin')).toEqual(h.rows('in-process'));
  });

  it('train() takes it by name, with its own fields', async () => {
    const tensors = tf.memory().numTensors;
    const r = await train({
      env: 'credit/loop',
      algo: 'reinforce',
      baselineRate: 0.25,
      model,
      backend: 'wasm',
      threads: 1,
      envs: 2,
      numSteps: 4,
      numMinibatches: 2,
      evalEpisodes: 0,
      perplexityLines: 4,
      maxIterations: 2,
      runs: h.runs,
      runName: 'library',
      quiet: true,
      log: () => {},
    } as unknown as TrainOptions);
    expect(r.interrupted).toBe(false);
    // The model, the trainer's optimiser and every tensor of the updates were freed.
    expect(tf.memory().numTensors).toBe(tensors);
    const rows = h.rows('library');
    expect(h.json('library', 'config.json')).toMatchObject({
      algo: 'reinforce',
      baselineRate: 0.25,
    });
    expect(rows[0]!.meanReturn).not.toBe(0);
    expect(rows[1]!.baseline).toBeCloseTo(0.25 * rows[0]!.meanReturn!, 12);
  });

  it('has the settings compare matches runs by: its fields, without those it ignores', () => {
    const app = registeredApp(KEY);
    const saved = loadRunConfig(app, h.dir('straight'));
    const settings = runSettings(saved);
    expect(settings).toMatchObject({ algo: 'reinforce', task: KEY, baselineRate: 0.5, seed: 1 });
    // Generation fields decide nothing on labelled actions (its settingsOf drops them)...
    expect('temperature' in settings).toBe(false);
    expect(flatRunConfig(saved).temperature).toBe(0.5);
    // ...so a run that differs only there is the same experiment, and one with another α is not.
    const values = { ...flatRunConfig(saved), runName: 'other' };
    const same = resolveRun(app, { values: { ...values, temperature: 0.9 } });
    expect(runSettings(same)).toEqual(settings);
    const other = resolveRun(app, { values: { ...values, baselineRate: 0.2 } });
    expect(runSettings(other)).not.toEqual(settings);
  });

  it('is refused, with the reason, where the environment does not meet its needs, and its fields are checked', async () => {
    const ds = await train1('datascicoding/iris', 'refused', 1);
    expect(ds.code).toBe(2);
    expect(ds.out).toMatch(
      /--algo: "reinforce" is not offered for datascicoding: reinforce needs the valid action labels of every step, and this environment's actions are open text; choose one of: poad, ntpo, etpo, grpo, rloo, gigpo/,
    );
    expect(existsSync(h.dir('refused'))).toBe(false);
    await expect(
      train({ env: 'datascicoding/iris', algo: 'reinforce', model } as unknown as TrainOptions),
    ).rejects.toThrow(/train\(\) options.algo: "reinforce" is not offered for datascicoding/);
    const rate = await train1(VH, 'bad-rate', 1, ['--baseline-rate', '2']);
    expect(rate.code).toBe(2);
    expect(rate.out).toMatch(/--baseline-rate: 2 is above the maximum 1/);
    const clip = await train1(VH, 'bad-field', 1, ['--clip', '0.1']);
    expect(clip.code).toBe(2);
    // A field of PPO's that it did not pick is refused, naming the algorithms that have it.
    expect(clip.out).toMatch(/--clip: not an option of --algo reinforce; it is one of poad, ntpo/);
  });
});
