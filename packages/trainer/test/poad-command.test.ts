// The `poad` command of the published package, in process: environments found through the
// installed packages' package.json and --env-module, `poad envs`, and train → eval → play on a
// registered environment through the same command line as the apps.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { environmentPackages, poadMain } from '../src/poad.js';
import { TINY_RUN } from './cli-harness.js';
import { tinyModelDir } from './tiny-model.js';

const repo = new URL('../../..', import.meta.url).pathname;
const fixture = new URL('./fixtures/coin-env.mjs', import.meta.url).pathname;
let model = '';
let runs = '';
const out: string[] = [];
const ctx = {
  cwd: repo,
  out: (t: string) => void out.push(t),
  log: (l: string) => void out.push(`${l}\n`),
};
const said = () => out.splice(0).join('');
/** The command as a user runs it: its own process (one module graph, as from the published bin). */
const poad = (args: readonly string[]) => {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', new URL('../src/bin/poad.ts', import.meta.url).pathname, ...args],
    { cwd: repo, encoding: 'utf8', timeout: 600_000 },
  );
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
};

beforeAll(async () => {
  model = await tinyModelDir();
  runs = mkdtempSync(join(tmpdir(), 'poad-cli-'));
});
afterAll(() => {
  rmSync(runs, { recursive: true, force: true });
  rmSync(join(model, '..'), { recursive: true, force: true });
});

describe('the poad command', () => {
  it('finds the environment packages by their package.json', () => {
    const found = environmentPackages(repo).map((p) => [p.name, p.register]);
    expect(found).toEqual(
      expect.arrayContaining([
        ['@poad/envs-virtualhome', 'registerVirtualHomeEnvs'],
        ['@poad/envs-datascicoding', 'registerDataSciCodingEnvs'],
      ]),
    );
  });

  it('lists the environments, what they offer and their algorithms; --env-module adds one', async () => {
    const { code, out: text } = poad(['envs', '--env-module', fixture]);
    expect(code, text).toBe(0);
    expect(text).toMatch(
      /virtualhome\/food-preparation +labels, seeded resets +poad ntpo twosome archer etpo grpo rloo gigpo/,
    );
    expect(text).toMatch(
      /datascicoding\/iris +text, seeded resets +poad ntpo etpo grpo rloo gigpo/,
    );
    expect(text).toMatch(/fixture\/coin +labels, seeded resets/);
  });

  it('trains a registered environment, then evaluates and plays the run, the env read from the run', async () => {
    const args = ['--model', model, ...TINY_RUN, '--runs', runs, '--run-name', 'coin', '--quiet'];
    const { code, out: text } = poad([
      'train',
      '--env',
      'fixture/coin',
      '--env-module',
      fixture,
      '--max-iterations',
      '2',
      ...args,
    ]);
    expect(code, text).toBe(0);
    expect(text).toContain(`done: ${join(runs, 'coin')}`);
    const config = JSON.parse(readFileSync(join(runs, 'coin', 'config.json'), 'utf8'));
    expect(config).toMatchObject({ task: 'fixture/coin', algo: 'poad' });
    const dir = join(runs, 'coin');
    const ev = poad(['eval', '--resume', dir, '--env-module', fixture]);
    expect(ev.code, ev.out).toBe(0);
    expect(ev.out).toContain('checkpoint: iteration 2');
    expect(existsSync(join(dir, 'eval-iter-2.json'))).toBe(true);
    const play = poad(['play', '--resume', dir, '--env-module', fixture]);
    expect(play.code, play.out).toBe(0);
    expect(play.out).toMatch(/heads/);
  });

  it('says what is wrong in one line with exit code 2', async () => {
    expect(await poadMain(['train'], ctx)).toBe(2);
    expect(said()).toMatch(/poad train needs --env ID \(one of: .*virtualhome\/food-preparation/);
    expect(await poadMain(['fly'], ctx)).toBe(2);
    expect(said()).toMatch(/unknown command "fly"; use train, eval, play or envs/);
    expect(await poadMain(['train', '--env', 'nowhere/none'], ctx)).toBe(2);
    expect(said()).toMatch(/nowhere\/none/);
    expect(await poadMain(['envs', '--env-module', 'no/such/file.mjs'], ctx)).toBe(2);
    expect(said()).toMatch(/--env-module no\/such\/file.mjs: no such file/);
  });
});
