import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { type IsolationProbe, SANDBOX_MARKER } from '../src/index.js';
import { SERVER_MARKER } from '../src/sandbox-server.js';

/** The system interpreter the tests score with. */
export const PYTHON = '/usr/bin/python3';

/** Whether the tests run under CI (`CI` set to anything but empty, `0` or `false`). */
export const inCI = !['', '0', 'false'].includes(process.env.CI ?? '');

/**
 * What the namespace tests check on this machine: `namespaces` where user namespaces work, or
 * `fallback` where they do not: then `isolation: 'namespaces'` must be refused with the reason
 * and `auto` must run every program in the basic mode, and the namespace suites check that.
 *
 * Under CI a machine must have them unless it says it has none: `.ci/run` checks with `unshare`
 * and sets `POAD_NO_USER_NAMESPACES` to what it found. Missing namespaces without that variable
 * throw, naming the reason, and so does that variable where they work (the two checks disagree).
 * Outside CI a machine without them runs the fallback checks and says so on stderr.
 */
export function namespaceSupport(probe: IsolationProbe): 'namespaces' | 'fallback' {
  const declared = process.env.POAD_NO_USER_NAMESPACES ?? '';
  if (probe.namespaces) {
    if (declared) {
      throw new Error(
        `POAD_NO_USER_NAMESPACES says this machine has no user namespaces (${declared}), but the sandbox's probe built them: unset it`,
      );
    }
    return 'namespaces';
  }
  if (inCI && !declared) {
    throw new Error(
      `namespace isolation is unavailable under CI: ${probe.detail}. CI machines must allow unprivileged user namespaces; .ci/run sets POAD_NO_USER_NAMESPACES (and the tests check the fallback) only where its own unshare check fails`,
    );
  }
  console.warn(
    `user namespaces are unavailable here (${probe.detail}): the namespace tests check the basic fallback instead`,
  );
  return 'fallback';
}

/**
 * Resolves once `condition()` holds, checking every 50 ms; rejects naming `what` after
 * `timeoutMs` (generous: the wait ends at the event, the limit only stops a hang).
 */
export async function waitUntil(
  condition: () => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until)
      throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

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

/**
 * Runs a Python snippet with the system interpreter and parses its JSON output. Asynchronous, so
 * that sandboxed runs started beside it go on while it computes.
 */
export function pythonJson<T>(code: string, args: string[] = []): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(
      PYTHON,
      ['-I', '-c', code, ...args],
      { encoding: 'utf8', maxBuffer: 1 << 28 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`the Python snippet failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout) as T);
      },
    );
  });
}
