import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chooseIsolation,
  type Dataset,
  type EvaluateOptions,
  EvaluationPool,
  evaluateProgram,
  type FailureReason,
  type IsolationMode,
  type IsolationRequest,
  probeIsolation,
  SandboxUnavailableError,
} from '../src/index.js';
import { forkServerProblem } from '../src/sandbox-server.js';
import {
  body,
  LOGISTIC,
  namespaceSupport,
  ownForkServers,
  ownSandboxProcesses,
  PYTHON,
  processesMatching,
} from './helpers.js';
import { builtinDataset } from './shared-datasets.js';

/**
 * Defines the hostile-program suite for one isolation mode: every program must end as a
 * contained failure (reward -1 with a reason) and leave no process, file or connection behind.
 * Namespace runs are forked from the fork server unless `forkServer` is false (then each starts
 * its own interpreter through `unshare`). On a machine without user namespaces the namespace
 * suite checks the fallback instead: `namespaces` is refused with the reason, and every program
 * run with `auto` is contained by the basic mode (see `namespaceSupport`; under CI, namespaces
 * that are missing without `.ci/run` saying so fail here).
 */
export async function defineHostileSuite(mode: IsolationMode, forkServer = true): Promise<void> {
  const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
  const scratch = mkdtempSync(join(tmpdir(), 'poad-dsc-hostile-test-'));
  const runsDir = join(scratch, 'runs');
  // Laid out like a real machine: the temp directory is searchable, ~/.ssh is private.
  chmodSync(scratch, 0o755);
  mkdirSync(runsDir);
  // Only the namespace suites ask whether namespaces work here (the basic mode never uses them).
  const probe = mode === 'namespaces' ? await probeIsolation(PYTHON, runsDir) : null;
  const fallback = probe !== null && namespaceSupport(probe) === 'fallback';
  /** What the suite asks for, and the isolation every program must then run under. */
  const request: IsolationRequest = fallback ? 'auto' : mode;
  const expected: IsolationMode = fallback ? 'basic' : mode;
  const launch =
    mode !== 'namespaces'
      ? ''
      : fallback
        ? ' unavailable, auto falls back to basic'
        : forkServer
          ? ', fork server'
          : ', new interpreter';
  const home = join(scratch, 'home');
  const secretFile = join(home, '.ssh', 'id_rsa');
  const outsideFile = join(scratch, 'outside.txt');
  const projectFile = join(packageDir, 'package.json');
  const escapedIntoProject = join(packageDir, 'escaped-by-sandbox.txt');
  const SECRET = 'dummy-private-key-for-the-sandbox-test';
  const NAMESPACE_KINDS = ['user', 'mnt', 'pid', 'net', 'ipc', 'uts', 'cgroup'];
  const ENV_SECRET = 'env-secret-for-the-sandbox-test';

  let dataset: Dataset;
  let server: Server;
  let serverPort = 0;
  let connections = 0;

  beforeAll(async () => {
    mkdirSync(join(home, '.ssh'), { recursive: true, mode: 0o700 });
    writeFileSync(secretFile, SECRET, { mode: 0o600 });
    process.env.POAD_SANDBOX_TEST_SECRET = ENV_SECRET;
    dataset = await builtinDataset('iris');
    server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    serverPort = typeof address === 'object' && address ? address.port : 0;
  }, 60_000);

  afterAll(async () => {
    delete process.env.POAD_SANDBOX_TEST_SECRET;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(scratch, { recursive: true, force: true });
  });

  interface Hostile {
    name: string;
    code: () => string;
    /** Acceptable failure reasons (the exact one depends on the isolation layer that stops it). */
    reasons: FailureReason[];
    /** What the error must say (namespace and basic wording). */
    error: RegExp;
    limits?: EvaluateOptions['limits'];
  }

  const corpus: Hostile[] = [
    {
      name: 'infinite loop',
      code: () => body('while True:', '    pass'),
      reasons: ['timeout'],
      error: /did not finish within 2 s/,
      limits: { timeoutMs: 2000 },
    },
    {
      name: 'CPU-time exhaustion',
      code: () => body('while True:', '    pass'),
      reasons: ['cpu-limit', 'crashed'],
      error: /more than 1 s of CPU time|SIGKILL/,
      limits: { timeoutMs: 20_000, cpuSeconds: 1 },
    },
    {
      name: 'fork bomb',
      code: () => body('import os', 'while True:', '    os.fork()'),
      reasons: ['exception'],
      error: /Resource temporarily unavailable|starting processes is blocked/,
    },
    {
      name: 'memory bomb',
      code: () => body('blocks = []', 'while True:', '    blocks.append(bytearray(128 << 20))'),
      reasons: ['memory-limit'],
      error: /MemoryError/,
      limits: { memoryMb: 600 },
    },
    {
      name: 'filling the disk',
      code: () =>
        body(
          "block = b'x' * (1 << 20)",
          'for i in range(100000):',
          "    with open('fill-%d.bin' % i, 'wb') as f:",
          '        f.write(block)',
        ),
      reasons: ['exception'],
      // Each file stays under the file-size limit: the total is what must be stopped.
      error: /No space left on device|at most 64 file openings for writing/,
      limits: { diskMb: 16, fileSizeMb: 4 },
    },
    {
      name: 'huge output',
      code: () => body('while True:', "    print('x' * 65536)"),
      reasons: ['output-limit'],
      error: /printed more than 1048576 bytes/,
    },
    {
      name: 'writing outside its directory',
      code: () =>
        body(
          `open(${JSON.stringify(outsideFile)}, 'w').write('escaped')`,
          `open(${JSON.stringify(escapedIntoProject)}, 'w').write('escaped')`,
          'model = None',
        ),
      reasons: ['exception'],
      error: /No such file or directory|Read-only file system|outside the sandbox is blocked/,
    },
    {
      name: 'reading ~/.ssh',
      code: () =>
        body(`secret = open(${JSON.stringify(secretFile)}).read()`, 'print(secret)', LOGISTIC),
      reasons: ['exception'],
      error: /No such file or directory.*id_rsa|outside the sandbox is blocked.*id_rsa/,
    },
    {
      name: 'reading ~/.ssh through a symlink',
      code: () =>
        body(
          'import os',
          `os.symlink(${JSON.stringify(secretFile)}, 'key')`,
          "print(open('key').read())",
          LOGISTIC,
        ),
      reasons: ['exception'],
      error: /No such file or directory|outside the sandbox is blocked/,
    },
    {
      name: 'reading the project files',
      code: () => body(`print(open(${JSON.stringify(projectFile)}).read())`, LOGISTIC),
      reasons: ['exception'],
      error: /No such file or directory|outside the sandbox is blocked/,
    },
    {
      name: 'reading the environment of the host',
      code: () =>
        body(
          'import os',
          'print(dict(os.environ))',
          `print(open('/proc/${process.pid}/environ').read())`,
          LOGISTIC,
        ),
      reasons: ['exception'],
      error: /No such file or directory|outside the sandbox is blocked/,
    },
    {
      name: 'opening a network connection',
      code: () =>
        body(
          'import socket',
          `socket.create_connection(('127.0.0.1', ${serverPort}), timeout=2).close()`,
          LOGISTIC,
        ),
      reasons: ['exception'],
      error: /Network is unreachable|Connection refused|network access is blocked/,
    },
    {
      name: 'killing its parent',
      code: () =>
        body(
          'import os, signal',
          'os.kill(os.getppid(), signal.SIGKILL)',
          'os.killpg(os.getpgid(0), signal.SIGKILL)',
          LOGISTIC,
        ),
      reasons: ['crashed', 'exception'],
      error: /SIGKILL|sending signals is blocked/,
    },
    {
      name: 'leaving a process behind',
      code: () =>
        body(
          'import subprocess',
          "subprocess.Popen(['/bin/sh', '-c', 'sleep 300; echo poad-dsc-sandbox-orphan'], start_new_session=True)",
          "raise RuntimeError('left a process behind')",
        ),
      reasons: ['exception'],
      error: /left a process behind|starting processes is blocked/,
    },
    {
      name: 'os._exit',
      code: () => body('import os', 'os._exit(0)'),
      reasons: ['no-result'],
      error: /exited with code 0 before build_model returned/,
    },
    {
      name: 'deep recursion',
      code: () => body('def down(n):', '    return down(n + 1) + 1', 'down(0)'),
      reasons: ['exception'],
      error: /RecursionError/,
    },
    {
      name: 'stack overflow in C code',
      code: () =>
        body(
          'import sys, json',
          'sys.setrecursionlimit(10 ** 9)',
          'x = []',
          'for _ in range(10 ** 6):',
          '    x = [x]',
          'json.dumps(x)',
        ),
      reasons: ['crashed', 'exception', 'memory-limit'],
      error: /SIGSEGV|RecursionError|MemoryError/,
    },
  ];

  function checkHostUnaffected(): void {
    expect(readdirSync(runsDir)).toEqual([]);
    expect(existsSync(outsideFile)).toBe(false);
    expect(existsSync(escapedIntoProject)).toBe(false);
    expect(readFileSync(secretFile, 'utf8')).toBe(SECRET);
    expect(connections).toBe(0);
    expect(ownSandboxProcesses()).toEqual([]);
    expect(processesMatching('poad-dsc-sandbox-orphan')).toEqual([]);
    if (expected === 'namespaces' && forkServer) {
      // The runs really were forked: the server started, and stays for the next run.
      expect(forkServerProblem(PYTHON, runsDir)).toBeNull();
      expect(ownForkServers().length).toBeGreaterThan(0);
    } else {
      expect(ownForkServers()).toEqual([]);
    }
  }

  describe(`hostile programs, ${mode} isolation${launch}`, () => {
    const pool = new EvaluationPool(1);
    for (const hostile of corpus) {
      it(`contains: ${hostile.name}`, async () => {
        const evaluation = await evaluateProgram(dataset, hostile.code(), {
          python: PYTHON,
          isolation: request,
          forkServer,
          tmpDir: runsDir,
          pool,
          limits: { timeoutMs: 15_000, memoryMb: 1024, ...hostile.limits },
        });
        expect(evaluation.ok).toBe(false);
        expect(evaluation.isolation).toBe(expected);
        expect(hostile.reasons).toContain(evaluation.reason);
        expect(evaluation.error).toMatch(hostile.error);
        expect(evaluation.stdout).not.toContain(SECRET);
        expect(evaluation.stdout).not.toContain(ENV_SECRET);
        expect(evaluation.stdout).not.toContain('"name": "@poad/envs-datascicoding"');
        checkHostUnaffected();
      }, 40_000);
    }

    it('still scores an honest program afterwards', async () => {
      const evaluation = await evaluateProgram(dataset, LOGISTIC, {
        python: PYTHON,
        isolation: request,
        forkServer,
        tmpDir: runsDir,
        pool,
      });
      expect(evaluation.error).toBeUndefined();
      expect(evaluation.ok).toBe(true);
      expect(evaluation.isolation).toBe(expected);
      expect(evaluation.auc).toBeGreaterThan(0.95);
      checkHostUnaffected();
    }, 30_000);
  });

  it(`${mode}${launch}: a fork bomb does not starve an evaluation running beside it`, async () => {
    const options = {
      python: PYTHON,
      isolation: request,
      forkServer,
      tmpDir: runsDir,
      pool: new EvaluationPool(2),
    };
    const [bomb, honest] = await Promise.all([
      evaluateProgram(dataset, body('import os', 'while True:', '    os.fork()'), options),
      evaluateProgram(dataset, LOGISTIC, options),
    ]);
    expect(bomb.ok).toBe(false);
    expect(honest.error).toBeUndefined();
    expect(honest.ok).toBe(true);
    expect([bomb.isolation, honest.isolation]).toEqual([expected, expected]);
    checkHostUnaffected();
  }, 40_000);

  describe(`isolation details, ${mode}${launch}`, () => {
    if (fallback && probe) {
      it("namespaces are refused with the probe's reason, and auto chooses the basic mode", async () => {
        expect(probe.detail.length).toBeGreaterThan(0);
        const refused = await chooseIsolation('namespaces', PYTHON, runsDir).catch(
          (e: unknown) => e,
        );
        expect(refused).toBeInstanceOf(SandboxUnavailableError);
        expect((refused as Error).message).toContain(probe.detail);
        expect(await chooseIsolation('auto', PYTHON, runsDir)).toBe('basic');
        checkHostUnaffected();
      }, 30_000);
    } else if (mode === 'namespaces') {
      it('namespace mode sees a private root with no capabilities and no network', async () => {
        const evaluation = await evaluateProgram(
          dataset,
          body(
            'import os, socket',
            "print('ROOT', sorted(os.listdir('/')))",
            "print('CWD', os.getcwd(), os.environ.get('HOME'))",
            "print('CAPS', [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')])",
            "print('PIDS', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))",
            "print('NET', sorted(name for _, name in socket.if_nameindex()))",
            `print('NS', {n: os.readlink('/proc/self/ns/' + n) for n in ${JSON.stringify(NAMESPACE_KINDS)}})`,
            "print('FDS', sorted(int(f) for f in os.listdir('/proc/self/fd')))",
            "print('INIT', open('/proc/1/cmdline').read().replace(chr(0), ' '))",
            LOGISTIC,
          ),
          {
            python: PYTHON,
            isolation: 'namespaces',
            forkServer,
            tmpDir: runsDir,
            pool: new EvaluationPool(1),
          },
        );
        expect(evaluation.ok).toBe(true);
        const out = evaluation.stdout;
        const system = ['bin', 'etc', 'lib', 'lib32', 'lib64', 'libx32', 'sbin', 'usr'].filter(
          (d) => existsSync(`/${d}`),
        );
        const root = [...system, 'dev', 'proc', 'sandbox'].sort();
        expect(out).toContain(`ROOT [${root.map((d) => `'${d}'`).join(', ')}]`);
        expect(out).toContain('CWD /sandbox /sandbox');
        expect(out).toContain("CAPS ['0000000000000000']");
        // 1 is the runner that only reaps, 2 the program.
        expect(out).toMatch(/PIDS \[1, 2\]/);
        expect(out).toMatch(/NET \['lo'\]/);
        // 0-3 plus the descriptor of the listing itself: nothing inherited from the host.
        expect(out).toMatch(/FDS \[0, 1, 2, 3, 4\]/);
        // Process 1 is the runner: forked from the fork server, or started through unshare
        // (under seeded-v1 with -s, so that the fixed PYTHONHASHSEED applies).
        expect(out).toMatch(
          forkServer
            ? /INIT \S+ -s -B \S+ serve poad-dsc-server-/
            : /INIT \S+ -s -B \S+ ns poad-dsc-sandbox-/,
        );
        const nsLine = /NS (\{.*\})/.exec(out)?.[1] ?? '{}';
        const inside = JSON.parse(nsLine.replace(/'/g, '"')) as Record<string, string>;
        for (const kind of NAMESPACE_KINDS) {
          expect(inside[kind], kind).toMatch(/^[a-z]+:\[\d+\]$/);
          expect(inside[kind], kind).not.toBe(readlinkSync(`/proc/self/ns/${kind}`));
        }
        checkHostUnaffected();
      }, 30_000);
    } else {
      it('passes only an allowlisted environment', async () => {
        const evaluation = await evaluateProgram(
          dataset,
          // scikit-learn adds KMP_* variables to its own environment when imported.
          body(
            'import os, sys',
            "print('ENV', sorted(k for k in os.environ if not k.startswith('KMP_')))",
            "print('HASHSEED', os.environ['PYTHONHASHSEED'], sys.flags.ignore_environment)",
            // The runner's own directory (here the program's) is not on the module path, as
            // with -I, although the interpreter runs with -s.
            "print('OWN DIR ON PATH', any(os.path.realpath(p or '.') == os.getcwd() for p in sys.path))",
            LOGISTIC,
          ),
          { python: PYTHON, isolation: 'basic', tmpDir: runsDir, pool: new EvaluationPool(1) },
        );
        expect(evaluation.ok).toBe(true);
        expect(evaluation.stdout).toContain(
          "ENV ['HOME', 'LANG', 'MALLOC_ARENA_MAX', 'MKL_NUM_THREADS', 'OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'PATH', 'PYTHONHASHSEED', 'TMPDIR']",
        );
        expect(evaluation.stdout).toContain('HASHSEED 0 0');
        expect(evaluation.stdout).toContain('OWN DIR ON PATH False');
      }, 30_000);
    }
  });
}
