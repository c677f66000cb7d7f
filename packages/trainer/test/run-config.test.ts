// How command lines and train()'s options resolve into a run: one schema per algorithm, presets
// from the environment, one validation, old config.json names mapped at load (no training).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OptionError } from '@poad/config';
import { SMALL_MODEL_VALUES } from '@poad/envs-core';
import { DATASCICODING_PRESETS } from '@poad/envs-datascicoding';
import { OVERCOOKED_PRESETS } from '@poad/envs-overcooked';
import { VIRTUALHOME_PRESETS } from '@poad/envs-virtualhome';
import { afterAll, describe, expect, it } from 'vitest';
import { algorithmEntry, algorithmNames } from '../src/algorithms/registry.js';
import type { AppSpec } from '../src/app.js';
import { runConfigOf } from '../src/cli.js';
import { commandLineSchema } from '../src/command-line.js';
import { migrateRunConfig } from '../src/migrate-config.js';
import { defaultPresets, offeredAlgorithms, presetRun } from '../src/presets.js';
import { loadRunConfig, resolveRun } from '../src/run-config.js';
import { RUN_OPTIONS } from '../src/run-options.js';
import { flatRunConfig, runSettings } from '../src/run-settings.js';
import { tinyVirtualHomeApp as vh } from './tiny-app.js';

const oc: AppSpec = {
  ...vh,
  presets: OVERCOOKED_PRESETS,
  tasks: ['tomato-salad'],
  defaultTask: 'tomato-salad',
};
const dsc: AppSpec = { ...vh, presets: DATASCICODING_PRESETS };

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
/** A run folder holding `config` as its config.json. */
function runWith(config: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'poad-run-config-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  return dir;
}

describe('one schema from the flag to the trainer', () => {
  it("a flag is the config field in kebab-case and reaches the algorithm's config under the same name", async () => {
    const rc = await runConfigOf(vh, [
      '--num-minibatches',
      '8',
      '--gae-lambda',
      '0.9',
      '--lr',
      '3e-4',
    ]);
    expect(rc.config).toMatchObject({
      numMinibatches: 8,
      gaeLambda: 0.9,
      lr: 3e-4,
      algorithm: 'poad',
    });
    // The old spellings are not flags any more.
    await expect(runConfigOf(vh, ['--minibatches', '8'])).rejects.toThrow(
      /unknown option --minibatches\. Did you mean --num-minibatches\?/,
    );
    await expect(runConfigOf(vh, ['--lambda', '0.9'])).rejects.toThrow(/unknown option --lambda/);
  });

  it('every config field of every algorithm is a flag, and the run options besides', () => {
    const flags = commandLineSchema(vh);
    for (const name of algorithmNames())
      for (const field of Object.keys(algorithmEntry(name).configSchema))
        expect(field in flags).toBe(true);
    for (const field of Object.keys(RUN_OPTIONS)) expect(field in flags).toBe(true);
    expect('algorithm' in flags).toBe(false);
  });

  it('values are checked once, naming the flag and where it came from', async () => {
    await expect(runConfigOf(vh, ['--lr', '-1'])).rejects.toThrow(
      'command line --lr: -1 is below the minimum 0',
    );
    await expect(runConfigOf(vh, ['--envs', '0'])).rejects.toThrow(
      /command line --envs: 0 is below the minimum 1/,
    );
    await expect(runConfigOf(vh, ['--advantage-normalisation', 'chunk:0'])).rejects.toThrow(
      /--advantage-normalisation: "chunk:0": expected masked, nan-trick, none or chunk:N/,
    );
    await expect(runConfigOf(vh, ['--preset', 'huge'])).rejects.toThrow(
      /command line --preset: "huge" is not one of: small, paper/,
    );
  });

  it('a field of another algorithm is refused, naming the algorithm it belongs to', async () => {
    await expect(runConfigOf(vh, ['--beta', '0.05'])).rejects.toThrow(
      /command line --beta: not an option of --algo poad; it is one of etpo's/,
    );
    await expect(runConfigOf(vh, ['--algo', 'etpo', '--clip', '0.1'])).rejects.toThrow(
      /--clip: not an option of --algo etpo; it is one of poad, ntpo, twosome, archer, grpo, rloo, gigpo's/,
    );
  });

  it('an algorithm the environment does not offer is refused with those it does', async () => {
    await expect(runConfigOf(dsc, ['--algo', 'archer'])).rejects.toThrow(
      /command line --algo: "archer" is not offered for virtualhome: archer needs the valid action labels of every step, and this environment's actions are open text; choose one of: poad, ntpo, etpo, grpo, rloo, gigpo/,
    );
    await expect(runConfigOf(vh, ['--algo', 'dqn'])).rejects.toThrow(
      /"dqn" is not offered for virtualhome \(no such algorithm is registered\)/,
    );
  });

  it("cross-field rules stay with the algorithm: ntpo's critic is not the exact BAD values", async () => {
    await expect(runConfigOf(vh, ['--algo', 'ntpo', '--critic', 'oracle'])).rejects.toThrow(
      /critic.*'oracle' gives the exact values of the BAD backup/,
    );
    // The same field is fine for poad, and twosome takes the label token space.
    expect((await runConfigOf(vh, ['--algo', 'poad', '--critic', 'oracle'])).config).toMatchObject({
      critic: 'oracle',
    });
    expect(
      (await runConfigOf(vh, ['--algo', 'twosome', '--token-space', 'labels'])).config,
    ).toMatchObject({ tokenSpace: 'labels' });
  });
});

describe("presets come from the environment's package", () => {
  it('layer schema defaults < preset < config file < flags', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poad-run-config-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'c.yaml'), 'num-minibatches: 2\nlr: 1e-4\nseed: 4\n');
    const rc = await runConfigOf(vh, ['--config', join(dir, 'c.yaml'), '--lr', '2e-4']);
    expect(rc.config).toMatchObject({ numMinibatches: 2, lr: 2e-4, seed: 4, epochs: 2, clip: 0.2 });
    expect(rc.run).toMatchObject({ envs: 8, envSteps: 25_600 });
  });

  it('each algorithm takes the preset fields its config has; an algorithm row changes its own', async () => {
    const lrs = async (spec: AppSpec, argv: string[]) => {
      const c = (await runConfigOf(spec, argv)).config as unknown as Record<string, number>;
      return [c.lr, c.criticLr];
    };
    // DataSciCoding: NTPO's own learning rates, POAD's for POAD and ETPO; a flag still wins.
    expect(await lrs(dsc, ['--algo', 'poad'])).toEqual([1e-3, 3e-3]);
    expect(await lrs(dsc, ['--algo', 'etpo'])).toEqual([1e-3, 3e-3]);
    expect(await lrs(dsc, ['--algo', 'ntpo'])).toEqual([3e-4, 9e-4]);
    expect(await lrs(dsc, ['--algo', 'ntpo', '--lr', '2e-4'])).toEqual([2e-4, 9e-4]);
    const etpo = await runConfigOf(dsc, ['--algo', 'etpo']);
    expect(etpo.config).toMatchObject({ numSteps: 8, maxNewTokens: 192, beta: 0.1, tau: 0.005 });
    expect('entropyCoef' in etpo.config).toBe(false);
    expect(etpo.run).toMatchObject({ model: 'default-code', evalEpisodes: 10 });
    // Overcooked: the label token space, but vocabulary for TWOSOME; the paper preset has none.
    expect((await runConfigOf(oc, [])).config.tokenSpace).toBe('labels');
    expect((await runConfigOf(oc, ['--algo', 'etpo'])).config.tokenSpace).toBe('labels');
    expect((await runConfigOf(oc, ['--algo', 'twosome'])).config.tokenSpace).toBe('vocabulary');
    expect((await runConfigOf(oc, ['--preset', 'paper'])).config.tokenSpace).toBe('vocabulary');
    // VirtualHome: one set of learning rates for every algorithm; ARCHER's paper row its own.
    for (const algo of ['poad', 'ntpo', 'twosome', 'archer'])
      expect(await lrs(vh, ['--algo', algo])).toEqual([5e-4, 1e-3]);
    const archer = await runConfigOf(vh, ['--algo', 'archer', '--preset', 'paper']);
    expect(archer.run.envSteps).toBe(6200);
    expect(archer.config).toMatchObject({ gradAccumulation: 1, epochs: 5, lr: 1e-6 });
  });

  it('every preset of every environment is a valid run of every algorithm it offers', () => {
    for (const presets of [
      VIRTUALHOME_PRESETS,
      OVERCOOKED_PRESETS,
      DATASCICODING_PRESETS,
      defaultPresets(),
    ]) {
      const spec: AppSpec = { ...vh, presets };
      for (const preset of Object.keys(presets.presets))
        for (const algo of offeredAlgorithms(spec)) {
          const rc = resolveRun(spec, { values: { algo, preset } });
          // Every preset field is a field of the run, of this algorithm or of another one.
          const known = new Set([
            ...Object.keys(RUN_OPTIONS),
            ...algorithmNames().flatMap((a) => Object.keys(algorithmEntry(a).configSchema)),
          ]);
          for (const p of Object.values(presets.presets))
            for (const k of [
              ...Object.keys(p.values),
              ...Object.values(p.byAlgorithm ?? {}).flatMap(Object.keys),
            ])
              expect(known.has(k), k).toBe(true);
          // Its minibatches split evenly into gradient-accumulation chunks.
          const c = rc.config as unknown as { numMinibatches: number; gradAccumulation?: number };
          const mb = Math.floor((rc.config.numSteps * rc.run.envs) / c.numMinibatches);
          expect(mb % (c.gradAccumulation ?? 1), `${preset} ${algo}`).toBe(0);
        }
    }
  });

  it("train()'s default presets for an environment without its own are the small-model values VirtualHome's small preset spreads", () => {
    // One object, written once in @poad/envs-core, not a copy of VirtualHome's numbers.
    expect(defaultPresets().presets.small!.values).toBe(SMALL_MODEL_VALUES);
    expect(VIRTUALHOME_PRESETS.presets.small!.values).toMatchObject(SMALL_MODEL_VALUES);
    expect(offeredAlgorithms({ presets: defaultPresets() })).toEqual(algorithmNames());
    expect(offeredAlgorithms({ presets: defaultPresets('text') })).not.toContain('twosome');
  });

  it('an environment offers the algorithms whose needs its traits meet, and says why not', async () => {
    expect(offeredAlgorithms(dsc)).toEqual(['poad', 'ntpo', 'etpo', 'grpo', 'rloo', 'gigpo']);
    await expect(runConfigOf(dsc, ['--algo', 'twosome'])).rejects.toThrow(
      /"twosome" is not offered for .*: twosome needs the valid action labels of every step, and this environment's actions are open text; choose one of: poad, ntpo, etpo, grpo, rloo, gigpo/,
    );
    const noSeeds: AppSpec = {
      ...vh,
      presets: { ...VIRTUALHOME_PRESETS, traits: { actions: 'labels', seededResets: false } },
    };
    expect(offeredAlgorithms(noSeeds)).toEqual(['poad', 'ntpo', 'twosome', 'archer', 'etpo']);
    await expect(runConfigOf(noSeeds, ['--algo', 'gigpo'])).rejects.toThrow(
      /gigpo plays each group of episodes from one start state and needs resets from a seed/,
    );
  });

  it('presetRun gives a browser the same config as a run', async () => {
    const a = presetRun(OVERCOOKED_PRESETS, 'ntpo', { seed: 3 });
    const b = await runConfigOf(oc, ['--algo', 'ntpo', '--seed', '3']);
    expect(a.config).toEqual(b.config);
    expect(a.envs).toBe(b.run.envs);
    expect(() => presetRun(DATASCICODING_PRESETS, 'archer')).toThrow(OptionError);
  });
});

describe('train() options are typed values, never strings', () => {
  it('checks them by field name', () => {
    const spec = vh;
    expect(
      resolveRun(spec, { values: { algo: 'ntpo', intraGamma: 0.9, lr: 1e-4 } }).config,
    ).toMatchObject({
      intraGamma: 0.9,
      lr: 1e-4,
    });
    expect(() =>
      resolveRun(spec, { values: { lr: 2 }, where: 'train() options', naming: 'field' }),
    ).toThrow('train() options.lr: 2 is above the maximum 1');
    expect(() =>
      resolveRun(spec, { values: { lern: 2 }, where: 'train() options', naming: 'field' }),
    ).toThrow(/train\(\) options\.lern: unknown option for --algo poad/);
  });
});

describe('config.json: new names, and old runs read under them', () => {
  it('holds the run options, the config fields by their schema names and the env options', async () => {
    const rc = await runConfigOf(vh, ['--num-minibatches', '2', '--seed', '3']);
    const flat = flatRunConfig(rc);
    expect(flat).toMatchObject({
      numMinibatches: 2,
      gaeLambda: 0.95,
      seed: 3,
      algo: 'poad',
      preset: 'small',
    });
    for (const k of ['minibatches', 'lambda', 'algorithm', 'resume']) expect(k in flat).toBe(false);
    // A run written with the new names resumes with the same config.
    const dir = runWith(flat);
    const back = loadRunConfig(vh, dir);
    expect(back.config).toEqual(rc.config);
    expect(flatRunConfig(back)).toEqual(flat);
  });

  // config.json of a POAD run written before the rename (docs/results.md's runs look like this).
  const OLD_POAD = {
    task: 'food-preparation',
    algo: 'poad',
    preset: 'small',
    seed: 2,
    model: 'default',
    backend: 'auto',
    envs: 8,
    envSteps: 25600,
    numSteps: 16,
    lr: 0.0005,
    criticLr: 0.001,
    epochs: 2,
    minibatches: 4,
    gradAccumulation: 1,
    gamma: 0.95,
    lambda: 0.9,
    entropyCoef: 0.001,
    clip: 0.2,
    targetKl: 0,
    candidateNormalisation: 'words',
    maxNewTokens: 10,
    temperature: 0.5,
    topK: 50,
    truncationAsTermination: false,
    loraRank: 8,
    loraAlpha: 16,
    runs: 'runs',
    maxNonFiniteSkips: 8,
    checkpointEvery: 1,
    evalEpisodes: 100,
    evalEvery: 0,
    quiet: false,
    beta: 0.1,
  };

  it('reads an environment option a run recorded before it existed as the environment says it was', () => {
    const spec: AppSpec = {
      ...vh,
      extraOptions: {
        scoring: { type: 'enum', choices: ['old', 'new'], default: 'new', description: 'rule' },
      },
      recordedDefaults: { scoring: 'old' },
    };
    expect(loadRunConfig(spec, runWith(OLD_POAD)).envOptions.scoring).toBe('old');
    expect(loadRunConfig(spec, runWith({ ...OLD_POAD, scoring: 'new' })).envOptions.scoring).toBe(
      'new',
    );
    // A new run takes today's default.
    expect(resolveRun(spec, { values: {} }).envOptions.scoring).toBe('new');
  });

  it('maps the two renamed fields once, at load, and drops what the algorithm never took', () => {
    const rc = loadRunConfig(vh, runWith(OLD_POAD));
    expect(rc.config).toMatchObject({ numMinibatches: 4, gaeLambda: 0.9, targetKl: 0, seed: 2 });
    expect('beta' in rc.config).toBe(false);
    // Fields it was recorded without take the defaults the code of that time used.
    expect(rc.config).toMatchObject({ tokenSpace: 'vocabulary', advantageNormalisation: 'masked' });
    expect(rc.run.threads).toBeGreaterThan(0);
    // ETPO runs recorded PPO's options too; they are dropped, ETPO's own kept.
    const etpo = loadRunConfig(
      vh,
      runWith({ ...OLD_POAD, algo: 'etpo', tau: 0.01, optimizer: 'adamw' }),
    );
    expect(etpo.config).toMatchObject({
      numMinibatches: 4,
      beta: 0.1,
      tau: 0.01,
      optimizer: 'adamw',
    });
    for (const k of ['clip', 'gaeLambda', 'entropyCoef', 'targetKl', 'gradAccumulation'])
      expect(k in etpo.config).toBe(false);
    // train() recorded the preset family, which presets no longer need.
    expect(() => loadRunConfig(vh, runWith({ ...OLD_POAD, family: 'virtualhome' }))).not.toThrow();
  });

  it('migrateRunConfig renames only old configs and keeps unknown fields for the schema to refuse', () => {
    const takes = (k: string) => k !== 'beta';
    expect(migrateRunConfig({ numMinibatches: 2, beta: 1 }, takes)).toEqual({
      numMinibatches: 2,
      beta: 1,
    });
    expect(migrateRunConfig({ minibatches: 2, lambda: 0.5, beta: 1, typo: 3 }, takes)).toEqual({
      numMinibatches: 2,
      gaeLambda: 0.5,
      typo: 3,
    });
    expect(() => loadRunConfig(vh, runWith({ ...OLD_POAD, typo: 3 }))).toThrow(
      /typo: unknown option/,
    );
  });

  it('an old and a new run with the same settings have the same settings key', async () => {
    const old = loadRunConfig(vh, runWith({ ...OLD_POAD, runs: 'elsewhere', quiet: true }));
    const fresh = await runConfigOf(vh, [
      '--seed',
      '2',
      '--gae-lambda',
      '0.9',
      '--target-kl',
      '0',
      '--eval-episodes',
      '100',
    ]);
    expect(runSettings(old)).toEqual(runSettings(fresh));
    // NTPO's unset γ_w is γ; POAD ignores γ_w.
    const ntpo = await runConfigOf(vh, ['--algo', 'ntpo']);
    const ntpo95 = await runConfigOf(vh, ['--algo', 'ntpo', '--intra-gamma', '0.95']);
    expect(runSettings(ntpo)).toEqual(runSettings(ntpo95));
    const poad = await runConfigOf(vh, ['--intra-gamma', '0.5']);
    expect(runSettings(poad)).toEqual(runSettings(await runConfigOf(vh, [])));
    expect(runSettings(ntpo)).not.toEqual(
      runSettings(await runConfigOf(vh, ['--algo', 'ntpo', '--intra-gamma', '0.9'])),
    );
  });

  it('--resume keeps the run options; only the resumable ones may change', async () => {
    const dir = runWith(OLD_POAD);
    const rc = await runConfigOf(vh, ['--resume', dir, '--max-iterations', '3', '--threads', '1']);
    expect(rc.run).toMatchObject({ resume: dir, maxIterations: 3, threads: 1 });
    expect(rc.config.seed).toBe(2);
    await expect(runConfigOf(vh, ['--resume', dir, '--seed', '5'])).rejects.toThrow(
      /--resume keeps the run's own settings; remove --seed/,
    );
    await expect(runConfigOf(vh, ['--resume', join(dir, 'nope')])).rejects.toThrow(
      /no config\.json there/,
    );
  });
});
