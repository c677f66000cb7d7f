import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { waitUntil } from './waiting.js';

const root = new URL('../../..', import.meta.url).pathname;

/** Runs an app's entry script as a real child process (as `npm run train:*` does). */
export function spawnApp(
  script: string,
  args: readonly string[],
): {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>;
} {
  // `node --import tsx`: one process, so signals reach the app directly (no wrapper relaying them).
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, script), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FORCE_COLOR: '0' },
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>(
    (resolve) => {
      child.on('close', (code, signal) => resolve({ code, signal, out }));
    },
  );
  return { child, done };
}

/** Resolves once `path` exists (polling), or rejects after `ms`. */
export function waitFor(path: string, ms = 120_000): Promise<void> {
  return waitUntil(() => existsSync(path), path, { timeoutMs: ms, intervalMs: 200 });
}
