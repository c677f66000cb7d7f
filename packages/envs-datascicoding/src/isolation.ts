import { SandboxUnavailableError } from './errors.js';
import { probeFailure, probeRequest } from './launch.js';
import { type IsolationMode, runSandboxed } from './sandbox.js';

/** Which isolation to use: `auto` picks namespaces when they work here, else the basic fallback. */
export type IsolationRequest = 'auto' | IsolationMode;

/** Result of {@link probeIsolation}. */
export interface IsolationProbe {
  namespaces: boolean;
  /** Why namespaces are unavailable (empty when they work). */
  detail: string;
}

const probes = new Map<string, Promise<IsolationProbe>>();

/**
 * Tests once per interpreter (and temp directory) whether the namespace sandbox can be built on
 * this machine, by starting the runner in `probe` mode: new user, mount, PID and network
 * namespaces, private root, no capabilities, then numpy and scikit-learn imported inside it.
 */
export function probeIsolation(python: string, tmpDir?: string): Promise<IsolationProbe> {
  const key = `${python}\0${tmpDir ?? ''}`;
  let pending = probes.get(key);
  if (!pending) {
    pending = runProbe(python, tmpDir);
    probes.set(key, pending);
  }
  return pending;
}

async function runProbe(python: string, tmpDir?: string): Promise<IsolationProbe> {
  if (process.platform !== 'linux') {
    return { namespaces: false, detail: `namespaces need Linux, this is ${process.platform}` };
  }
  const why = probeFailure(await runSandboxed(probeRequest(python, tmpDir, 60_000)));
  return why === null ? { namespaces: true, detail: '' } : { namespaces: false, detail: why };
}

/** Resolves the isolation mode to use, throwing when `namespaces` is demanded but unavailable. */
export async function chooseIsolation(
  request: IsolationRequest,
  python: string,
  tmpDir?: string,
): Promise<IsolationMode> {
  if (request === 'basic') return 'basic';
  const probe = await probeIsolation(python, tmpDir);
  if (probe.namespaces) return 'namespaces';
  if (request === 'namespaces') throw new SandboxUnavailableError(probe.detail);
  return 'basic';
}
