import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

const root = new URL('../../..', import.meta.url).pathname;

/** Path of a command-line tool installed at the repository root (`node_modules/.bin`). */
export const rootBin = (name: string): string => join(root, 'node_modules', '.bin', name);

/** Runs a command and returns its stdout; a non-zero exit throws with stdout and stderr. */
export function runTool(
  cmd: string,
  args: readonly string[],
  cwd: string,
  timeoutMs = 300_000,
): string {
  try {
    return execFileSync(cmd, args, {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `${cmd} ${args.join(' ')} (in ${cwd}) failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`,
    );
  }
}

/**
 * {@link runTool} without blocking the thread (for commands that take minutes, so that the test
 * runner's worker keeps answering).
 */
export function runToolAsync(
  cmd: string,
  args: readonly string[],
  cwd: string,
  timeoutMs = 300_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { cwd, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err)
          reject(
            new Error(
              `${cmd} ${args.join(' ')} (in ${cwd}) failed: ${err.message}\n${stdout}\n${stderr}`,
            ),
          );
        else resolve(stdout);
      },
    );
  });
}

/**
 * Lints a package as it would be published: `publint --strict` (package.json fields, exports,
 * files) and arethetypeswrong's strict profile (types resolve for ESM and CJS consumers under
 * node10, node16 and bundler resolution), both on its packed tarball (`.tgz`, from
 * {@link packInto}). The type check runs in this process, so checking many tarballs loads
 * TypeScript once.
 * @throws Error with publint's output or the list of type problems.
 */
export async function checkPublished(target: string): Promise<{ publint: string; attw: string }> {
  if (!target.endsWith('.tgz')) {
    throw new Error(
      `checkPublished: ${target} is not a tarball; pack the package with packInto first`,
    );
  }
  const publint = await runToolAsync(
    rootBin('publint'),
    ['run', target, '--strict'],
    dirname(target),
  );
  if (!/No problems found|All good/i.test(publint)) {
    throw new Error(`publint --strict reports problems in ${basename(target)}:\n${publint}`);
  }
  const problems = await typeProblems(target);
  if (problems.length > 0) {
    throw new Error(
      `arethetypeswrong (strict profile) reports ${problems.length} problem(s) in ${basename(target)}:\n${problems.join('\n')}`,
    );
  }
  return { publint, attw: 'No problems found' };
}

/**
 * arethetypeswrong's problems in a tarball under its strict profile (no resolution or rule
 * ignored, as `attw FILE` with its defaults), one line each; none for a package without types.
 */
async function typeProblems(tarball: string): Promise<string[]> {
  const attw = await import('@arethetypeswrong/core');
  const pkg = attw.createPackageFromTarballData(new Uint8Array(readFileSync(tarball)));
  const analysis = await attw.checkPackage(pkg);
  if (!analysis.types) return [];
  return analysis.problems.map((p) => JSON.stringify(p));
}

/** The paths a package's tarball would hold (`npm pack --dry-run`). */
export function packedFiles(pkgDir: string): string[] {
  const out = runTool('npm', ['pack', '--dry-run', '--json', '--loglevel=error'], pkgDir);
  return (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
}

/** `npm pack`s each package into `dest` and returns the tarball paths, in the same order. */
export async function packInto(dest: string, pkgDirs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const dir of pkgDirs) {
    const before = new Set(readdirSync(dest));
    await runToolAsync('npm', ['pack', '--pack-destination', dest, '--loglevel=error'], dir);
    const made = readdirSync(dest).filter((f) => f.endsWith('.tgz') && !before.has(f));
    if (made.length !== 1) throw new Error(`npm pack in ${dir} made ${made.length} tarballs`);
    out.push(join(dest, made[0]!));
  }
  return out;
}

type LockEntry = Record<string, unknown> & {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  optional?: boolean;
};

interface Manifest extends LockEntry {
  name: string;
  scripts?: Record<string, string>;
  gypfile?: boolean;
  engines?: Record<string, string>;
  license?: string;
}

/** Names a package needs installed: its dependencies, optional ones and non-optional peers. */
function neededDeps(entry: LockEntry): { name: string; optional: boolean }[] {
  const peers = Object.keys(entry.peerDependencies ?? {}).filter(
    (n) => !entry.peerDependenciesMeta?.[n]?.optional,
  );
  return [
    ...Object.keys(entry.dependencies ?? {}).map((name) => ({ name, optional: false })),
    ...Object.keys(entry.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
    ...peers.map((name) => ({ name, optional: false })),
  ];
}

/**
 * A package-lock.json for a project holding `tarballs`, whose third-party packages are the
 * versions (and integrity hashes) the repository's own lockfile pins: with it `npm ci
 * --offline` installs from the npm cache alone (a plain `npm install --offline` would need the
 * registry's package documents, which `npm ci` never caches).
 */
function consumerLock(
  project: string,
  tarballs: readonly string[],
): { manifest: Record<string, unknown>; lock: Record<string, unknown> } {
  const rootLock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry & { link?: boolean; resolved?: string }>;
  };
  const source = rootLock.packages;
  const packages: Record<string, LockEntry> = {};
  const rootDeps: Record<string, string> = {};
  const ours = new Map<string, { file: string; manifest: Manifest }>();
  mkdirSync(join(project, 'tarballs'), { recursive: true });
  for (const tarball of tarballs) {
    const file = `tarballs/${basename(tarball)}`;
    copyFileSync(tarball, join(project, file));
    const manifest = JSON.parse(
      runTool('tar', ['-xzOf', tarball, 'package/package.json'], project),
    ) as Manifest;
    ours.set(manifest.name, { file, manifest });
    rootDeps[manifest.name] = `file:${file}`;
  }
  // Where each of our packages' own nested dependencies sit in the repository's lockfile.
  const workspaceDir = new Map<string, string>();
  for (const [path, entry] of Object.entries(source)) {
    if (!path.startsWith('node_modules/') && (entry as { name?: string }).name)
      workspaceDir.set((entry as { name: string }).name, path);
  }
  const queue: { from: string; fromSource: string; name: string; optional: boolean }[] = [];
  for (const [name, { file, manifest }] of ours) {
    const hash = createHash('sha512')
      .update(readFileSync(join(project, file)))
      .digest('base64');
    const install =
      manifest.gypfile ||
      ['preinstall', 'install', 'postinstall'].some((k) => manifest.scripts?.[k]);
    packages[`node_modules/${name}`] = {
      version: manifest.version,
      resolved: `file:${file}`,
      integrity: `sha512-${hash}`,
      ...(manifest.license ? { license: manifest.license } : {}),
      ...(install ? { hasInstallScript: true } : {}),
      ...pick(manifest, [
        'dependencies',
        'optionalDependencies',
        'peerDependencies',
        'peerDependenciesMeta',
        'engines',
        // npm ci links a package's commands from the lockfile's entry (`npx poad`).
        'bin',
      ]),
    };
    for (const dep of neededDeps(manifest))
      queue.push({
        from: `node_modules/${name}`,
        fromSource: workspaceDir.get(name) ?? '',
        ...dep,
      });
  }
  while (queue.length > 0) {
    const { from, fromSource, name, optional } = queue.shift()!;
    if (ours.has(name)) continue;
    if (name.startsWith('@poad/'))
      throw new Error(`${from} needs ${name}, which is not among the packed packages`);
    // Node's lookup: the nearest node_modules folder up from the dependent package.
    let found: { target: string; src: string } | undefined;
    for (let t = from, sp = fromSource; ; ) {
      const srcPath = `${sp ? `${sp}/` : ''}node_modules/${name}`;
      if (source[srcPath] && !source[srcPath]!.link) {
        found = { target: `${t ? `${t}/` : ''}node_modules/${name}`, src: srcPath };
        break;
      }
      if (!t) break;
      const up = (p: string) => {
        const i = p.lastIndexOf('/node_modules/');
        return i < 0 ? '' : p.slice(0, i);
      };
      t = up(t);
      sp = up(sp);
    }
    if (!found) {
      if (optional) continue;
      throw new Error(
        `${from} needs ${name}, which the repository's package-lock.json does not hold`,
      );
    }
    if (packages[found.target]) continue;
    const { dev, devOptional, peer, ...entry } = source[found.src]!;
    packages[found.target] = entry;
    for (const dep of neededDeps(entry))
      queue.push({ from: found.target, fromSource: found.src, ...dep });
  }
  const manifest = { name: 'consumer', private: true, type: 'module', dependencies: rootDeps };
  return {
    manifest,
    lock: {
      name: 'consumer',
      lockfileVersion: 3,
      requires: true,
      packages: { '': { name: 'consumer', dependencies: rootDeps }, ...packages },
    },
  };
}

function pick(o: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
}

/**
 * A new npm project in a temporary folder with `tarballs` installed from the local npm cache
 * only (`npm ci --offline`: no network). Third-party dependencies get the versions the
 * repository's package-lock.json pins, so they are cached after `npm ci` in this repository.
 * Returns the project folder.
 */
export async function installOffline(
  tarballs: readonly string[],
  o: { prefix?: string; omitOptional?: boolean } = {},
): Promise<string> {
  const project = mkdtempSync(join(tmpdir(), o.prefix ?? 'poad-consumer-'));
  const { manifest, lock } = consumerLock(project, tarballs);
  writeFileSync(join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(project, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  await runToolAsync(
    'npm',
    [
      'ci',
      '--offline',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...(o.omitOptional ? ['--omit=optional'] : []),
    ],
    project,
    600_000,
  );
  return project;
}

/**
 * The files of a README's example: the fenced code block after each `<!-- file: NAME -->` marker,
 * by name, in order. Tests write them into an installed project and run them.
 */
export function exampleFiles(markdown: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const m of markdown.matchAll(/<!-- file: ([\w.-]+) -->\s*```\w*\n([\s\S]*?)```/g))
    files.set(m[1]!, m[2]!);
  return files;
}

/**
 * Type-checks `code` as `check.mts` in `project` with a strict configuration and node16 module
 * resolution, as a TypeScript user's project would compile against the installed packages.
 * Throws with the compiler's messages when it reports an error.
 */
export function typecheckSnippet(
  project: string,
  code: string,
  o: { skipLibCheck?: boolean } = {},
): void {
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: 'node16',
        moduleResolution: 'node16',
        noEmit: true,
        target: 'es2022',
        types: [],
        ...(o.skipLibCheck ? { skipLibCheck: true } : {}),
      },
      files: ['check.mts'],
    }),
  );
  writeFileSync(join(project, 'check.mts'), code);
  runTool(rootBin('tsc'), ['-p', '.'], project);
}
