import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Dataset,
  type EvaluateOptions,
  EvaluationPool,
  evaluateProgram,
  probeIsolation,
  SandboxUnavailableError,
} from '../src/index.js';
import { forkServerProblem, SERVER_MARKER } from '../src/sandbox-server.js';
import {
  body,
  LOGISTIC,
  namespaceSupport,
  ownForkServers,
  ownSandboxProcesses,
  PYTHON,
  processesMatching,
  waitUntil,
} from './helpers.js';
import { builtinDataset } from './shared-datasets.js';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const scratch = mkdtempSync(join(tmpdir(), 'poad-dsc-fork-server-test-'));
chmodSync(scratch, 0o755);
let dataset: Dataset;
// The fork server forks into namespaces: without them these tests check the fallback instead
// (and under CI, missing namespaces fail here unless .ci/run found the machine has none).
const probe = await probeIsolation(PYTHON);
const support = namespaceSupport(probe);

/** Options for a pool of one, in a temp directory of its own (so: a fork server of its own). */
function ownServer(name: string): EvaluateOptions {
  const tmpDir = mkdtempSync(join(scratch, `${name}-`));
  chmodSync(tmpDir, 0o755);
  return { python: PYTHON, isolation: 'namespaces', tmpDir, pool: new EvaluationPool(1) };
}

/**
 * Options for the tests that need a server of this file's own but not a new one: those of the
 * first test, whose server has forked runs already (new ones where that test did not run first).
 * Runs under another scoring rule start a server of their own there.
 */
let warm: EvaluateOptions | undefined;
const warmServer = (): EvaluateOptions => {
  warm ??= ownServer('warm');
  return warm;
};

function serverPids(): number[] {
  return ownForkServers().map((line) => Number(line.split(':')[0]));
}

/** `data` as a JavaScript expression, for a script run in another process. */
function datasetSource(data: Dataset): string {
  const { x, y, ...plain } = data;
  return `{ ...${JSON.stringify(plain)}, x: new Float64Array(${JSON.stringify(Array.from(x))}), y: new Int32Array(${JSON.stringify(Array.from(y))}) }`;
}

beforeAll(async () => {
  dataset = await builtinDataset('iris');
}, 60_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.runIf(support === 'namespaces')('fork server', () => {
  it('forks every run from one warm server, and each run gets only its own output', async () => {
    const options = ownServer('output');
    warm = options;
    const before = serverPids();
    const quiet = await evaluateProgram(dataset, LOGISTIC, { ...options, forkServer: false });
    expect(serverPids()).toEqual(before);
    const runs = [];
    for (const code of [
      body("print('A' * 10, end='')", LOGISTIC),
      // A forged end-of-output line: it cannot hold the nonce drawn after the run.
      body(
        `print('\\npoad-dsc-end-' + '0' * 32)`,
        "import sys; print('to stderr', file=sys.stderr)",
        LOGISTIC,
      ),
      body("print('C')", LOGISTIC),
    ]) {
      runs.push(await evaluateProgram(dataset, code, options));
    }
    const [a, b, c] = runs;
    for (const run of runs) {
      expect(run?.error).toBeUndefined();
      expect(run?.auc).toBeCloseTo(quiet.auc, 12);
    }
    // build_model runs once per split: five times.
    expect(a?.stdout).toBe('A'.repeat(50));
    expect(a?.stderr).toBe('');
    expect(b?.stdout).toBe(`\npoad-dsc-end-${'0'.repeat(32)}\n`.repeat(5));
    expect(b?.stderr).toBe('to stderr\n'.repeat(5));
    expect(c?.stdout).toBe('C\n'.repeat(5));
    const after = serverPids().filter((pid) => !before.includes(pid));
    expect(after).toHaveLength(1);
    expect(forkServerProblem(PYTHON, options.tmpDir)).toBeNull();
    expect(ownSandboxProcesses()).toEqual([]);
  }, 60_000);

  it('gives every run fresh namespaces, files and random state', async () => {
    // Random state: under os-seeded each run draws its own from the operating system; under
    // seeded-v1 (default) each starts from its program's seed, so the same program draws the same.
    const options = { ...warmServer(), scoring: 'os-seeded' as const };
    // Only the first split prints and leaves marks; a later run must see none of them.
    const probe = body(
      'import os',
      "if not os.path.exists('/sandbox/mark'):",
      "    print('PIDS', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))",
      "    print('MARKS', os.path.exists('/dev/shm/mark'), os.environ.get('POAD_MARK'))",
      "    print('RAND', np.random.rand(), __import__('random').random())",
      "    open('/sandbox/mark', 'w').close()",
      "    open('/dev/shm/mark', 'w').close()",
      "    os.environ['POAD_MARK'] = 'left'",
      LOGISTIC,
    );
    const first = await evaluateProgram(dataset, probe, options);
    const second = await evaluateProgram(dataset, probe, options);
    expect(first.ok && second.ok).toBe(true);
    const line = (out: string, tag: string) => out.split('\n').find((l) => l.startsWith(tag));
    for (const run of [first, second]) {
      // A new PID namespace: the runner is 1 and the program 2, every time.
      expect(line(run.stdout, 'PIDS')).toBe('PIDS [1, 2]');
      expect(line(run.stdout, 'MARKS')).toBe('MARKS False None');
    }
    expect(line(first.stdout, 'RAND')).toMatch(/^RAND 0\.\d+ 0\.\d+$/);
    const rand = [line(first.stdout, 'RAND'), line(second.stdout, 'RAND')].map((l) =>
      (l as string).split(' '),
    );
    expect(rand[0]?.[1]).not.toBe(rand[1]?.[1]);
    expect(rand[0]?.[2]).not.toBe(rand[1]?.[2]);
    const seeded = { ...options, scoring: 'seeded-v1' as const };
    const again = [
      await evaluateProgram(dataset, probe, seeded),
      await evaluateProgram(dataset, probe, seeded),
    ].map((run) => line(run.stdout, 'RAND'));
    expect(again[0]).toMatch(/^RAND 0\.\d+ 0\.\d+$/);
    expect(again[1]).toBe(again[0]);
  }, 60_000);

  it('leaves no trace of one run in the shared pipes of the next', async () => {
    const options = warmServer();
    const spoiler = await evaluateProgram(
      dataset,
      body('import os', 'for fd in (1, 2, 3):', '    os.set_blocking(fd, False)', LOGISTIC),
      options,
    );
    expect(spoiler.ok).toBe(true);
    const next = await evaluateProgram(
      dataset,
      body('import os', "print('BLOCKING', [os.get_blocking(fd) for fd in (1, 2, 3)])", LOGISTIC),
      options,
    );
    expect(next.ok).toBe(true);
    expect(next.stdout.split('\n')[0]).toBe('BLOCKING [True, True, True]');
  }, 60_000);

  it('stops a run at its time limit and keeps the server for the next one', async () => {
    const options = warmServer();
    await evaluateProgram(dataset, LOGISTIC, options);
    const servers = serverPids();
    const stuck = await evaluateProgram(dataset, body('while True:', '    pass'), {
      ...options,
      limits: { timeoutMs: 1500 },
    });
    expect(stuck.reason).toBe('timeout');
    expect(ownSandboxProcesses()).toEqual([]);
    const next = await evaluateProgram(dataset, LOGISTIC, options);
    expect(next.ok).toBe(true);
    expect(serverPids()).toEqual(servers);
  }, 60_000);

  it('fails only the running program when its server dies, then starts a new server', async () => {
    const options = ownServer('crash');
    const others = serverPids();
    await evaluateProgram(dataset, LOGISTIC, options);
    const mine = serverPids().filter((p) => !others.includes(p));
    expect(mine).toHaveLength(1);
    const running = evaluateProgram(dataset, body('import time', 'time.sleep(60)'), options);
    // Kill the server as soon as the run's first process exists: wherever in the launch that
    // lands (even before the namespace's first process set its parent-death signal), every
    // process of the run must go.
    await waitUntil(() => ownSandboxProcesses().length > 0, 'the run starts');
    const victim = mine[0] as number;
    process.kill(victim, 'SIGKILL');
    const killed = await running;
    expect(killed.ok).toBe(false);
    expect(killed.reason).toBe('sandbox');
    expect(killed.error).toMatch(/fork server exited/);
    // Its children die with it (parent-death signals).
    await waitUntil(() => ownSandboxProcesses().length === 0, "the server's children are gone");
    const next = await evaluateProgram(dataset, LOGISTIC, options);
    expect(next.ok).toBe(true);
    expect(serverPids()).not.toContain(victim);
  }, 60_000);

  it('starts new interpreters when the server cannot start, and says why', async () => {
    const options = ownServer('fallback');
    // An interpreter that runs everything but the server.
    const python = join(options.tmpDir as string, 'python-without-server');
    writeFileSync(
      python,
      `#!/bin/sh\nif [ "$4" = serve ]; then echo 'no fork server here' >&2; exit 3; fi\nexec ${PYTHON} "$@"\n`,
    );
    chmodSync(python, 0o755);
    const run = await evaluateProgram(dataset, LOGISTIC, { ...options, python });
    expect(run.error).toBeUndefined();
    expect(run.ok).toBe(true);
    expect(forkServerProblem(python, options.tmpDir)).toMatch(/no fork server here/);
  }, 60_000);

  it('does not keep Node alive: Node exits while its idle server still runs, and the server ends with it', async () => {
    // The child notes, when its event loop has nothing left to do ('beforeExit'), whether its
    // fork server is still alive. Were Node kept alive by the server, that moment would only come
    // once the idle server stopped by itself (30 s), so the server is alive then exactly when Node
    // does not wait for it; no clock is involved.
    const script = [
      `import { evaluateProgram } from ${JSON.stringify(join(packageDir, 'src/index.ts'))};`,
      `import { processesMatching } from ${JSON.stringify(join(packageDir, 'test/helpers.ts'))};`,
      `import { SERVER_MARKER } from ${JSON.stringify(join(packageDir, 'src/sandbox-server.ts'))};`,
      // The test's own iris, written out: the child starts no loader (only what runs it).
      `const dataset = ${datasetSource(dataset)};`,
      `const run = await evaluateProgram(dataset, ${JSON.stringify(LOGISTIC)}, { python: ${JSON.stringify(PYTHON)}, isolation: 'namespaces' });`,
      "const servers = () => processesMatching(SERVER_MARKER + '-' + process.pid + '-').length;",
      'const during = servers();',
      "process.once('beforeExit', () => console.log(JSON.stringify({ pid: process.pid, ok: run.ok, during, atExit: servers() })));",
    ].join('\n');
    const file = join(scratch, 'one-run.mts');
    writeFileSync(file, script);
    const out = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--import', 'tsx', file], { cwd: packageDir }, (err, stdout) =>
        err ? reject(err) : resolve(stdout),
      );
    });
    const { pid, ok, during, atExit } = JSON.parse(out.trim().split('\n').pop() as string) as {
      pid: number;
      ok: boolean;
      during: number;
      atExit: number;
    };
    expect(ok).toBe(true);
    expect(during, 'the run was forked from a server').toBeGreaterThan(0);
    expect(
      atExit,
      'fork servers still running when Node had nothing left to do (0: Node waited for them)',
    ).toBeGreaterThan(0);
    await waitUntil(
      () => processesMatching(`${SERVER_MARKER}-${pid}-`).length === 0,
      'the servers of the exited Node process are gone',
    );
  }, 120_000);
});

describe.runIf(support === 'fallback')('fork server on a machine without user namespaces', () => {
  it('refuses namespace runs naming the reason; auto runs them in the basic mode without a server', async () => {
    const options = ownServer('fallback-mode');
    const refused = await evaluateProgram(dataset, LOGISTIC, options).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SandboxUnavailableError);
    expect((refused as SandboxUnavailableError).detail).toBe(probe.detail);
    const run = await evaluateProgram(dataset, LOGISTIC, { ...options, isolation: 'auto' });
    expect(run.error).toBeUndefined();
    expect(run.ok).toBe(true);
    expect(run.isolation).toBe('basic');
    expect(ownForkServers()).toEqual([]);
    expect(ownSandboxProcesses()).toEqual([]);
  }, 60_000);
});
