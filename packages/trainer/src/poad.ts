import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { OptionError, type OptionsSchema, UserError } from '@poad/config';
import { envSpec, listEnvs, makeEnv } from '@poad/envs-core';
import type { AppSpec } from './app.js';
import { EXIT_CODES, runCli } from './cli.js';
import { defaultPresets, offeredAlgorithms } from './presets.js';

/*
 * The `poad` command of the published package: the training command line of the apps (runCli) on
 * any registered environment. Environments come from the installed packages that declare
 * themselves environments in their package.json (`"poad": { "register": "registerXEnvs" }`: the
 * package's export that registers its environments) and from `--env-module FILE` (a module that
 * registers environments when imported, or exports `register()`).
 */

/** What the `poad` command needs of its surroundings (a test passes its own). */
export interface PoadContext {
  /** Where the command was typed: packages are looked up from its node_modules upwards. */
  readonly cwd: string;
  readonly out: (text: string) => void;
  readonly log: (line: string) => void;
}

const USAGE = `poad — train language agents with POAD and its baselines on any registered environment

Usage:
  poad train --env ID [options]        train (see: poad train --env ID --help)
  poad eval  --resume RUN [--checkpoint latest|best|iter-N]
  poad play  --resume RUN [--checkpoint latest|best|iter-N]
  poad envs                            the environments installed here, and the algorithms each offers

Every command also takes --env-module FILE: a module of your own that registers environments
(registerEnv of @poad/envs-core) or algorithms (registerAlgorithm of @poad/trainer), when it is
imported or in an exported register(). Environments of installed packages are found by their
package.json's "poad": { "register": "<export>" }.

Exit codes: 0 done; 2 bad input; 3 stopped on non-finite numbers; 130 interrupted (resume with
--resume RUN).
`;

/** The installed packages (from `cwd` up) whose package.json declares environments. */
export function environmentPackages(
  cwd: string,
): { name: string; dir: string; register: string }[] {
  const found = new Map<string, { name: string; dir: string; register: string }>();
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const modules = join(dir, 'node_modules');
    if (existsSync(modules))
      for (const entry of readdirSync(modules)) {
        const names = entry.startsWith('@')
          ? readdirSync(join(modules, entry)).map((n) => `${entry}/${n}`)
          : [entry];
        for (const name of names) {
          if (found.has(name)) continue;
          const pkgDir = join(modules, name);
          try {
            const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as {
              poad?: { register?: unknown };
            };
            if (typeof pkg.poad?.register === 'string')
              found.set(name, { name, dir: pkgDir, register: pkg.poad.register });
          } catch {
            // Not a package (or unreadable): not an environment package.
          }
        }
      }
    if (dirname(dir) === dir) break;
  }
  return [...found.values()];
}

/**
 * A package's ES module: by its name where this package resolves it (so that it shares this
 * package's `@poad/envs-core`, and with it the registry), else its folder's ES entry.
 */
async function importPackage(name: string, dir: string): Promise<Record<string, unknown>> {
  try {
    return (await import(name)) as Record<string, unknown>;
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw err;
  }
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    exports?: { '.'?: { import?: string | { default?: string } } };
    module?: string;
    main?: string;
  };
  const esm = pkg.exports?.['.']?.import;
  const entry =
    (typeof esm === 'string' ? esm : esm?.default) ?? pkg.module ?? pkg.main ?? 'index.js';
  return (await import(pathToFileURL(join(dir, entry)).href)) as Record<string, unknown>;
}

/** Registers the environments of every installed environment package and of `envModule`. */
export async function loadEnvironments(cwd: string, envModule: string | undefined): Promise<void> {
  for (const p of environmentPackages(cwd)) {
    let mod: Record<string, unknown>;
    try {
      mod = await importPackage(p.name, p.dir);
    } catch (err) {
      throw new UserError(
        `${p.name} declares environments but cannot be loaded (${(err as Error).message}); reinstall it or remove it`,
      );
    }
    const register = mod[p.register];
    if (typeof register !== 'function')
      throw new UserError(
        `${p.name}: its package.json names "${p.register}" as the export that registers its environments, but it has no such function`,
      );
    (register as () => unknown)();
  }
  if (envModule !== undefined) {
    const file = isAbsolute(envModule) ? envModule : resolve(cwd, envModule);
    if (!existsSync(file))
      throw new OptionError(
        `--env-module ${envModule}: no such file (a module that registers environments)`,
      );
    const mod = (await import(pathToFileURL(file).href)) as { register?: unknown };
    if (typeof mod.register === 'function') await (mod.register as () => unknown)();
  }
}

/**
 * The training app of registered environment `id`: its presets (or the small-model values for
 * labelled or open-text actions, as its registration says), its factory's options as flags, and
 * its unseen variants in the final evaluation.
 */
export function registeredApp(id: string): AppSpec {
  const spec = envSpec(id);
  if (!spec) {
    makeEnv(id); // throws the registry's UnknownEnvError, naming the registered ids
    throw new OptionError(`--env ${id}: not a registered environment`);
  }
  const meta = spec.meta;
  const presets = meta.presets ?? defaultPresets(meta.actionSpace === 'open' ? 'text' : 'labels');
  const variants = (meta.unseenVariants ?? []).filter((v) => envSpec(v) !== undefined);
  return {
    command: `poad train --env ${id}`,
    summary: meta.description ?? id,
    tasks: [id, ...variants],
    defaultTask: id,
    envId: (task) => task,
    makeEnv: (task, options) => makeEnv(task, options),
    presets,
    ...(meta.options ? { extraOptions: meta.options as OptionsSchema } : {}),
    optimalReturn: (task) => envSpec(task)?.meta.optimalReturn,
    evalTasks: (task) => [task, ...(task === id ? variants : [])],
    examples: [
      `npx poad train --env ${id}`,
      `npx poad train --env ${id} --algo ${offeredAlgorithms({ presets }).includes('twosome') ? 'twosome' : 'grpo'} --seed 2`,
      `npx poad eval --resume runs/<run directory>`,
    ],
  };
}

/** The environment a run directory trained on: its config.json's task, a registered id. */
function envOfRun(runDir: string): string {
  let task: unknown;
  try {
    task = (JSON.parse(readFileSync(join(runDir, 'config.json'), 'utf8')) as { task?: unknown })
      .task;
  } catch {
    throw new OptionError(
      `--resume ${runDir}: no readable config.json there; pass a run directory`,
    );
  }
  const id = String(task);
  if (envSpec(id)) return id;
  // A run of a training app records the task alone (e.g. food-preparation).
  const matches = listEnvs().filter((e) => e.endsWith(`/${id}`));
  if (matches.length === 1) return matches[0]!;
  throw new OptionError(
    `--resume ${runDir}: it trained on ${JSON.stringify(id)}, which is ${matches.length ? `ambiguous (${matches.join(', ')})` : 'no registered environment'}; pass --env ID`,
  );
}

/** Takes `--NAME VALUE` (or `--NAME=VALUE`) out of `argv`; its value, or undefined. */
function takeOption(argv: string[], name: string): string | undefined {
  const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return undefined;
  const a = argv[i]!;
  if (a.includes('=')) {
    argv.splice(i, 1);
    return a.slice(a.indexOf('=') + 1);
  }
  const value = argv[i + 1];
  if (value === undefined || value.startsWith('--'))
    throw new OptionError(`--${name} needs a value`);
  argv.splice(i, 2);
  return value;
}

/**
 * The `poad` command on `argv` (without the program name): `train`, `eval`, `play` (the training
 * command line of `runCli`, on the environment `--env` names or the run was trained on) and
 * `envs`. Returns the exit code.
 */
export async function poadMain(
  argv: readonly string[],
  ctx: PoadContext = {
    cwd: process.cwd(),
    out: (t) => process.stdout.write(t),
    log: (l) => process.stderr.write(`${l}\n`),
  },
): Promise<number> {
  const rest = [...argv];
  try {
    const command = rest.shift();
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      ctx.out(USAGE);
      return command === undefined ? EXIT_CODES.userError : EXIT_CODES.done;
    }
    const envModule = takeOption(rest, 'env-module');
    await loadEnvironments(ctx.cwd, envModule);
    if (command === 'envs') return listEnvironments(ctx);
    if (!['train', 'eval', 'play'].includes(command))
      throw new OptionError(
        `unknown command ${JSON.stringify(command)}; use train, eval, play or envs (see poad --help)`,
      );
    let env = takeOption(rest, 'env');
    if (env === undefined && command === 'train' && !rest.includes('--resume')) {
      if (rest.includes('--help') || rest.includes('-h')) {
        ctx.out(USAGE);
        return EXIT_CODES.done;
      }
      throw new OptionError(
        `poad train needs --env ID (one of: ${listEnvs().join(', ') || 'none installed; install an environment package such as @poad/envs-virtualhome'})`,
      );
    }
    if (env === undefined) {
      const resume = rest[rest.indexOf('--resume') + 1];
      if (!rest.includes('--resume') || resume === undefined)
        throw new OptionError(`poad ${command} needs --resume RUN (or --env ID with it)`);
      env = envOfRun(resume);
    }
    return await runCli(registeredApp(env), command === 'train' ? rest : [command, ...rest]);
  } catch (err) {
    if (err instanceof UserError) {
      ctx.log(`error: ${err.message}`);
      return EXIT_CODES.userError;
    }
    throw err;
  }
}

/** `poad envs`: every registered environment, what it offers a learner and its algorithms. */
function listEnvironments(ctx: PoadContext): number {
  const ids = listEnvs();
  if (ids.length === 0) {
    ctx.out(
      'No environments installed. Install an environment package (e.g. npm install @poad/envs-virtualhome) or pass --env-module FILE.\n',
    );
    return EXIT_CODES.done;
  }
  const rows = ids.map((id) => {
    const app = registeredApp(id);
    const t = app.presets.traits;
    return [
      id,
      `${t.actions}${t.seededResets ? ', seeded resets' : ''}`,
      offeredAlgorithms(app).join(' '),
      app.summary,
    ];
  });
  const width = (k: number) => Math.max(...rows.map((r) => r[k]!.length));
  ctx.out(
    rows
      .map(
        (r) =>
          `${r[0]!.padEnd(width(0))}  ${r[1]!.padEnd(width(1))}  ${r[2]!.padEnd(width(2))}  ${r[3]}`,
      )
      .join('\n') + '\n',
  );
  return EXIT_CODES.done;
}
