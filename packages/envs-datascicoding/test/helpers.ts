import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { SANDBOX_MARKER } from '../src/index.js';
import { SERVER_MARKER } from '../src/sandbox-server.js';

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

interface LiveProcess {
  pid: number;
  ppid: number;
  cmdline: string;
}

function liveProcesses(): LiveProcess[] {
  const found: LiveProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      found.push({ pid: Number(entry), ppid, cmdline });
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** Command lines of live processes that contain `needle`. */
export function processesMatching(needle: string): string[] {
  return liveProcesses()
    .filter((p) => p.cmdline.includes(needle))
    .map((p) => `${p.pid}: ${p.cmdline}`);
}

/** This test process's fork servers that are alive (idle or running a program). */
export function ownForkServers(): string[] {
  const marker = `${SERVER_MARKER}-${process.pid}-`;
  const live = liveProcesses();
  const marked = new Set(live.filter((p) => p.cmdline.includes(marker)).map((p) => p.pid));
  return live
    .filter((p) => marked.has(p.pid) && !marked.has(p.ppid))
    .map((p) => `${p.pid}: ${p.cmdline}`);
}

/**
 * Sandbox processes started by this test process that are still alive: those started through
 * `unshare`, and the children of its fork servers (forked, they carry the server's command line).
 */
export function ownSandboxProcesses(): string[] {
  const sandbox = `${SANDBOX_MARKER}-${process.pid}-`;
  const server = `${SERVER_MARKER}-${process.pid}-`;
  const live = liveProcesses();
  const served = new Set(live.filter((p) => p.cmdline.includes(server)).map((p) => p.pid));
  return live
    .filter((p) => p.cmdline.includes(sandbox) || (served.has(p.pid) && served.has(p.ppid)))
    .map((p) => `${p.pid}: ${p.cmdline}`);
}

/** Runs a Python snippet with the system interpreter and parses its JSON output. */
export function pythonJson<T>(code: string, args: string[] = []): T {
  const out = execFileSync(PYTHON, ['-I', '-c', code, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  return JSON.parse(out) as T;
}
