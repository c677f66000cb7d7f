import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { SANDBOX_MARKER } from '../src/index.js';

/** The system interpreter the tests score with. */
export const PYTHON = '/usr/bin/python3';

/**
 * Joins lines into an answer the way a model writes it after the prompt's indented new line:
 * the first line carries no indentation, later lines carry the body's four spaces.
 */
export function body(...lines: string[]): string {
  return lines.join('\n    ');
}

/** A quick, valid answer. */
export const LOGISTIC = body(
  'from sklearn.linear_model import LogisticRegression',
  'model = LogisticRegression(max_iter=1000)',
  'model.fit(x_train, y_train)',
);

/** Command lines of live processes that contain `needle`. */
export function processesMatching(needle: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmdline.includes(needle)) found.push(`${entry}: ${cmdline}`);
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** Sandbox processes started by this test process that are still alive. */
export function ownSandboxProcesses(): string[] {
  return processesMatching(`${SANDBOX_MARKER}-${process.pid}-`);
}

/** Runs a Python snippet with the system interpreter and parses its JSON output. */
export function pythonJson<T>(code: string, args: string[] = []): T {
  const out = execFileSync(PYTHON, ['-I', '-c', code, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  return JSON.parse(out) as T;
}
