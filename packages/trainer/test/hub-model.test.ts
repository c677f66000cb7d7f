// Training on a model named by Hub id (`--model ORG/NAME`), downloaded from the fake Hub of
// @poad/dev-kit into a temporary HF_HOME: environment.json records the commit, --resume loads
// that commit after the branch moved, every Hub failure is one line and exit 2, and
// --prompt-format chat prompts with the model's chat template (Llama 3.2 Instruct's, whose
// system turn carries today's date) on a date recorded in config.json.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from '@huggingface/jinja';
import { type FakeHub, type FakeRepo, startFakeHub, trainingHarness } from '@poad/dev-kit';
import { loadTokenizer, type TextTokenizer } from '@poad/hf-files';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Agent } from '../src/agent/agent.js';
import { runCli, runConfigOf } from '../src/cli.js';
import { evaluate, loadRunConfig, runSettings, train } from '../src/index.js';
import { TINY_RUN } from './cli-harness.js';
import { DoorEnv } from './door-env.js';
import { metricsRows, tinyVirtualHomeApp } from './tiny-app.js';
import { tinyModelDir } from './tiny-model.js';

const REPO = 'poad-test/tiny-agent';
const CHAT = 'poad-test/tiny-chat';
/** The chat template of meta-llama/Llama-3.2-1B-Instruct's tokenizer_config.json (hf-files' test fixture). */
const LLAMA_32 = JSON.parse(
  readFileSync(
    new URL('../../hf-files/test/fixtures/chat-templates/llama-3.2-instruct.json', import.meta.url),
    'utf8',
  ),
) as { chat_template: string };
/** The tiny model's tokenizer has `<s>` and `</s>`; Llama's own names are not in its vocabulary. */
const SPECIAL = { bos_token: '<s>', eos_token: '</s>' };

const HUB_VARIABLES = [
  'HF_HOME',
  'HF_HUB_CACHE',
  'HUGGINGFACE_HUB_CACHE',
  'HF_ENDPOINT',
  'HF_TOKEN',
  'HUGGING_FACE_HUB_TOKEN',
  'HF_TOKEN_PATH',
  'HF_HUB_OFFLINE',
  'XDG_CACHE_HOME',
] as const;
const savedEnv = Object.fromEntries(HUB_VARIABLES.map((k) => [k, process.env[k]]));

let hub: FakeHub;
let repo: FakeRepo;
let chatRepo: FakeRepo;
let modelFolder = '';
let hfHome = '';
const files: Record<string, Uint8Array | string> = {};
let tokenizer: TextTokenizer;

/** What the policies of the commands run in this file encoded and scored. */
const seen = {
  prompts: new Map<string, number[]>(),
  scored: [] as number[][],
  labels: new Map<string, number[]>(),
};
function recording(agent: Agent): Agent {
  const policy = agent.policy as Agent['policy'] & {
    scoreCandidates: (p: readonly Int32Array[], c: readonly (readonly Int32Array[])[]) => unknown;
  };
  const encodePrompt = policy.encodePrompt.bind(policy);
  const encodeContinuations = policy.encodeContinuations.bind(policy);
  const scoreCandidates = policy.scoreCandidates.bind(policy);
  policy.encodePrompt = async (observation: string) => {
    const ids = await encodePrompt(observation);
    seen.prompts.set(observation, Array.from(ids));
    return ids;
  };
  policy.encodeContinuations = async (observation: string, labels: readonly string[]) => {
    const ids = await encodeContinuations(observation, labels);
    labels.forEach((l, i) => {
      seen.labels.set(l, Array.from(ids[i]!));
    });
    return ids;
  };
  policy.scoreCandidates = (prompts, candidates) => {
    for (const p of prompts) seen.scored.push(Array.from(p));
    return scoreCandidates(prompts, candidates);
  };
  return agent;
}
function forget(): void {
  seen.prompts.clear();
  seen.scored.length = 0;
  seen.labels.clear();
}

const bytes = (v: Uint8Array | string) => (typeof v === 'string' ? new TextEncoder().encode(v) : v);

const h = trainingHarness({
  inProcess: (argv) => runCli(tinyVirtualHomeApp, argv, { wrapAgent: recording }),
  base: TINY_RUN,
  async setup() {
    modelFolder = await tinyModelDir();
    for (const f of readdirSync(modelFolder))
      files[f] = new Uint8Array(await readFile(join(modelFolder, f)));
    files['tokenizer_config.json'] = JSON.stringify(SPECIAL);
    files['README.md'] = '# a tiny test agent\n';
    tokenizer = await loadTokenizer(modelFolder);
    hub = await startFakeHub();
    repo = hub.addRepo(REPO, files);
    chatRepo = hub.addRepo(CHAT, {
      ...files,
      'tokenizer_config.json': JSON.stringify({
        ...SPECIAL,
        chat_template: LLAMA_32.chat_template,
      }),
    });
    hfHome = await mkdtemp(join(tmpdir(), 'poad-hf-home-'));
    for (const k of HUB_VARIABLES) delete process.env[k];
    process.env.HF_HOME = hfHome;
    process.env.HF_ENDPOINT = hub.endpoint;
  },
  teardown() {
    for (const k of HUB_VARIABLES) {
      if (savedEnv[k] === undefined) delete process.env[k];
      else process.env[k] = savedEnv[k];
    }
    rmSync(join(modelFolder, '..'), { recursive: true, force: true });
    rmSync(hfHome, { recursive: true, force: true });
  },
});
afterAll(async () => {
  await hub?.close();
});

/** The cache folder of a repository under HF_HOME. */
const cacheOf = (id: string) => join(hfHome, 'hub', `models--${id.replace('/', '--')}`);

/** The files of a folder and its subfolders, relative to it. */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

describe('--model ORG/NAME from the Hub', () => {
  it('downloads with a progress bar, trains, and records the repository and commit', async () => {
    const r = await h.run([
      '--runs',
      h.runs,
      '--run-name',
      'straight',
      '--max-iterations',
      '2',
      ...TINY_RUN,
      '--model',
      REPO,
    ]);
    expect(r.code, r.out).toBe(0);
    // The download's bar: bytes as kB, the rate and the ETA, ending at 100%.
    expect(r.out).toMatch(
      /downloading poad-test\/tiny-agent \[#+\] 100% [\d.]+ kB\/[\d.]+ kB \| \w+ elapsed, ETA \w+ \| rate [\d.]+ [kM]?B\/s \| files 4\/4/,
    );
    expect(r.out).toContain(`model ${REPO}: commit ${repo.commit} (main)`);
    const env = h.json<{ model: { model: string; folder: string; hub: unknown } }>(
      'straight',
      'environment.json',
    );
    expect(env.model.hub).toMatchObject({ repo: REPO, revision: 'main', commit: repo.commit });
    expect(env.model.folder).toBe(join(cacheOf(REPO), 'snapshots', repo.commit));
    expect(h.json('straight', 'config.json')).toMatchObject({ model: REPO, promptFormat: 'plain' });
    expect('promptDate' in h.json('straight', 'config.json')).toBe(false);
    // Python's layout under $HF_HOME/hub: only what the model needs.
    expect(tree(join(cacheOf(REPO), 'snapshots', repo.commit))).toEqual([
      'config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    expect(readFileSync(join(cacheOf(REPO), 'refs', 'main'), 'utf8').trim()).toBe(repo.commit);
    expect(h.rows('straight')).toHaveLength(2);
  });

  it('--resume loads the recorded commit, with no request, after the branch moved', async () => {
    hub.log.length = 0;
    const part = await h.run(h.args('pieces', 1, ['--model', REPO]));
    expect(part.code, part.out).toBe(0);
    // Cached: one request for the commit `main` points at, no file.
    expect(hub.log.map((q) => q.path)).toEqual([`/api/models/${REPO}/revision/main`]);
    // `main` moves to a commit with another config (a different model).
    const config = JSON.parse(new TextDecoder().decode(bytes(files['config.json']!)));
    const moved = hub.addRepo(REPO, {
      ...files,
      'config.json': JSON.stringify({ ...config, rms_norm_eps: 0.01 }),
    });
    expect(moved.commit).not.toBe(repo.commit);
    hub.log.length = 0;
    const resumed = await h.run(['--resume', h.dir('pieces'), '--max-iterations', '2', '--quiet']);
    expect(resumed.code, resumed.out).toBe(0);
    // The commit the run recorded, asked for as itself.
    expect(resumed.out).toContain(`model ${REPO}: commit ${repo.commit}\n`);
    expect(hub.log).toEqual([]);
    // Exactly the uninterrupted run's numbers.
    expect(metricsRows(h.dir('pieces'))).toEqual(metricsRows(h.dir('straight')));
    expect(
      h.json<{ model: { hub: unknown } }>('pieces', 'environment.json').model.hub,
    ).toMatchObject({ commit: repo.commit });
    // A new run takes the branch as it is now.
    const fresh = await h.run(h.args('moved', 1, ['--model', REPO]));
    expect(fresh.code, fresh.out).toBe(0);
    expect(
      h.json<{ model: { hub: unknown } }>('moved', 'environment.json').model.hub,
    ).toMatchObject({ commit: moved.commit });
    expect(hub.gets().map((q) => q.file)).toEqual(['config.json']);
  });
});

describe('a Hub failure through the command line: one line, exit 2, nothing left looking complete', () => {
  it('for each error of the list', async () => {
    const cfg = files['config.json']!;
    hub.addRepo('poad-test/gated', files, { gated: true });
    hub.addRepo('poad-test/bin-only', {
      'config.json': cfg,
      'pytorch_model.bin': new Uint8Array(2000).fill(1),
      'tokenizer.json': files['tokenizer.json']!,
    });
    hub.addRepo('poad-test/not-cached', files);
    hub.addRepo('poad-test/branches', files);
    const huge = hub.addRepo('poad-test/huge', files);
    huge.files.get('model.safetensors')!.claimedSize = 1e15;
    const weights = bytes(files['model.safetensors']!);
    const corrupt = hub.addRepo('poad-test/corrupt', {
      ...files,
      // Other bytes than every other repository's weights, so that only these are corrupted.
      'model.safetensors': Uint8Array.from([...weights, 1, 2, 3, 4]),
    });
    hub.corrupt.add(corrupt.files.get('model.safetensors')!.sha256);
    const cases: [string, string, RegExp, Record<string, string>?][] = [
      ['poad-test/nope', 'repo_not_found', /no such model repository .*HF_TOKEN/],
      ['poad-test/gated', 'gated', /gated model .*accept its conditions .*HF_TOKEN/],
      [
        'poad-test/branches@no-such-branch',
        'revision_not_found',
        /has no revision "no-such-branch"/,
      ],
      ['poad-test/bin-only', 'no_safetensors', /only safetensors is read/],
      ['poad-test/not-cached', 'offline_not_cached', /HF_HUB_OFFLINE/, { HF_HUB_OFFLINE: '1' }],
      ['poad-test/huge', 'cache_write', /no space left on the disk .*HF_HUB_CACHE/],
      ['poad-test/corrupt', 'checksum', /sha256/],
      ['poad-test/bad--name', 'invalid_model_id', /write ORG\/NAME or ORG\/NAME@REVISION/],
    ];
    for (const [id, code, fix, env = {}] of cases) {
      Object.assign(process.env, env);
      try {
        const name = `error-${code}`;
        const r = await h.run(h.args(name, 1, ['--model', id]));
        expect(r.code, `${id}: ${r.out}`).toBe(2);
        const lines = r.out.trim().split('\n');
        expect(lines, id).toHaveLength(1);
        expect(lines[0], id).toMatch(new RegExp(`^error: ${id.replace(/[/.@-]/g, '\\$&')}: `));
        expect(lines[0], id).toMatch(fix);
        // No run directory, and nothing of the model in the cache that looks complete.
        expect(existsSync(h.dir(name)), id).toBe(false);
        const cached = tree(cacheOf(id.split('@')[0]!));
        expect(
          cached.filter((f) =>
            /^refs\/|^snapshots\/.*\.safetensors$|^blobs\/[0-9a-f]{64}$/.test(f),
          ),
          id,
        ).toEqual([]);
      } finally {
        for (const k of Object.keys(env)) delete process.env[k];
      }
    }
  });
});

/** The date a `YYYY-MM-DD` stands for in the chat templates' clock: local midnight. */
const dayOf = (date: string) => {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(y, m - 1, d);
};

/** The prompt of an observation as `@huggingface/jinja` renders the template on `date`, tokenized. */
async function expectedPrompt(observation: string, date: string): Promise<number[]> {
  vi.useFakeTimers({ toFake: ['Date'], now: dayOf(date) });
  let text: string;
  try {
    text = new Template(LLAMA_32.chat_template).render({
      messages: [{ role: 'user', content: observation }],
      add_generation_prompt: true,
      ...SPECIAL,
    });
  } finally {
    vi.useRealTimers();
  }
  return tokenizer.encode(text, { addSpecialTokens: false });
}

describe('--prompt-format chat', () => {
  it('prompts with the chat template on the date config.json records, also after --resume on another day', async () => {
    const today = (d = new Date()) =>
      `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    const before = today();
    forget();
    const chat = ['--model', CHAT, '--prompt-format', 'chat'];
    const straight = await h.run(h.args('chat-straight', 2, chat));
    expect(straight.code, straight.out).toBe(0);
    const first = await h.run(h.args('chat', 1, chat));
    expect(first.code, first.out).toBe(0);
    const config = h.json<{ promptFormat: string; promptDate: string }>('chat', 'config.json');
    expect(config.promptFormat).toBe('chat');
    expect([before, today()]).toContain(config.promptDate);
    expect(h.json('chat', 'environment.json')).toMatchObject({
      model: { hub: { repo: CHAT, commit: chatRepo.commit }, promptFormat: 'chat' },
    });
    // Every prompt scored is the template rendered by @huggingface/jinja, then tokenized.
    expect(seen.prompts.size).toBeGreaterThan(0);
    for (const [observation, ids] of seen.prompts)
      expect(ids, observation).toEqual(await expectedPrompt(observation, config.promptDate));
    const prompts = [...seen.prompts.values()].map((p) => p.join());
    for (const p of seen.scored) expect(prompts).toContain(p.join());
    // Its date is in the system turn; the labels are the assistant's reply, without a leading space.
    const [observation, ids] = [...seen.prompts][0]!;
    const text = await tokenizer.decode(ids, { skipSpecialTokens: false });
    const d = dayOf(config.promptDate);
    const mon = d.toLocaleString('en-US', { month: 'short' });
    expect(text).toContain(
      `Today Date: ${String(d.getDate()).padStart(2, '0')} ${mon} ${d.getFullYear()}`,
    );
    expect(text).toContain(observation);
    expect(text.endsWith('<|start_header_id|>assistant<|end_header_id|>\n\n')).toBe(true);
    for (const [label, labelIds] of seen.labels)
      expect(labelIds, label).toEqual(await tokenizer.encode(label, { addSpecialTokens: false }));

    // Resumed on another day: the recorded date, the same prompts, the uninterrupted run's numbers.
    forget();
    vi.useFakeTimers({ toFake: ['Date'], now: new Date(2031, 0, 15), shouldAdvanceTime: true });
    let resumed: Awaited<ReturnType<typeof h.run>>;
    try {
      resumed = await h.run(['--resume', h.dir('chat'), '--max-iterations', '2', '--quiet']);
    } finally {
      vi.useRealTimers();
    }
    expect(resumed.code, resumed.out).toBe(0);
    expect(h.json('chat', 'config.json')).toMatchObject({
      promptFormat: 'chat',
      promptDate: config.promptDate,
    });
    expect(seen.prompts.size).toBeGreaterThan(0);
    for (const [o, p] of seen.prompts)
      expect(p, o).toEqual(await expectedPrompt(o, config.promptDate));
    expect(metricsRows(h.dir('chat'))).toEqual(metricsRows(h.dir('chat-straight')));
  });

  it('auto takes the chat template when the model has one; chat is refused for a model without', async () => {
    const auto = await h.run(h.args('auto', 1, ['--model', CHAT]));
    expect(auto.code, auto.out).toBe(0);
    expect(h.json('auto', 'config.json')).toMatchObject({ promptFormat: 'chat' });
    const refused = await h.run(
      h.args('no-template', 1, ['--model', REPO, '--prompt-format', 'chat']),
    );
    expect(refused.code).toBe(2);
    expect(refused.out.trim()).toMatch(
      /^error: promptFormat \(--prompt-format\) chat: the model poad-test\/tiny-agent(@[0-9a-f]+)? has no chat template .*use plain or auto$/,
    );
    expect(existsSync(h.dir('no-template'))).toBe(false);
  });
});

describe('runSettings of runs on Hub models (what compare --reuse matches)', () => {
  it('settles auto on the format the cached model takes, and leaves the date out', async () => {
    const app = tinyVirtualHomeApp;
    const settings = async (name: string, extra: string[]) =>
      runSettings(await runConfigOf(app, h.args(name, 1, extra)));
    // The chat run recorded `chat` and a date; a new `auto` run on the cached model settles on chat.
    expect(runSettings(loadRunConfig(app, h.dir('auto')))).toEqual(
      await settings('auto', ['--model', CHAT]),
    );
    expect(await settings('auto', ['--model', CHAT])).toMatchObject({ promptFormat: 'chat' });
    expect(await settings('x', ['--model', REPO])).toMatchObject({ promptFormat: 'plain' });
    // Not downloaded yet: it cannot be told.
    expect(await settings('x', ['--model', 'poad-test/elsewhere'])).toMatchObject({
      promptFormat: 'auto',
    });
  });
});

describe('train({ model: ORG/NAME })', () => {
  it('trains on the Hub model, records its commit, and evaluate() loads that commit', async () => {
    const log: string[] = [];
    const r = await train({
      env: (i) => new DoorEnv(i),
      envName: 'doors',
      model: CHAT,
      promptFormat: 'plain',
      envs: 2,
      numSteps: 4,
      numMinibatches: 2,
      evalEpisodes: 0,
      // The perplexity passes on 4 held-out texts, not all 200 (as TINY_RUN's runs here).
      perplexityLines: 4,
      maxIterations: 1,
      backend: 'wasm',
      quiet: true,
      runs: h.runs,
      runName: 'library',
      log: (line) => log.push(line),
    });
    expect(r).toMatchObject({ iterations: 1, interrupted: false });
    expect(h.json('library', 'environment.json')).toMatchObject({
      model: { model: CHAT, hub: { repo: CHAT, commit: chatRepo.commit }, promptFormat: 'plain' },
    });
    expect(h.json('library', 'config.json')).toMatchObject({ model: CHAT, promptFormat: 'plain' });
    hub.log.length = 0;
    log.length = 0;
    const result = await evaluate({
      runDir: r.runDir,
      env: (i) => new DoorEnv(i),
      episodes: 2,
      log: (line) => log.push(line),
    });
    expect(result.episodes).toBe(2);
    expect(hub.log).toEqual([]);
    expect(log).toContain(`model ${CHAT}: commit ${chatRepo.commit}`);
  });
});
