import { execFile } from 'node:child_process';
import { PythonUnavailableError } from './errors.js';

/** The interpreter used unless an option names another: Debian's system Python. */
export const DEFAULT_PYTHON = '/usr/bin/python3';

/** Versions reported by {@link checkPython}. */
export interface PythonInfo {
  python: string;
  pythonVersion: string;
  numpy: string;
  sklearn: string;
  pandas: string;
  scipy: string;
}

const PROBE = [
  'import json, sys',
  'import numpy, scipy, sklearn, pandas',
  "print(json.dumps({'pythonVersion': sys.version.split()[0], 'numpy': numpy.__version__,",
  "  'sklearn': sklearn.__version__, 'pandas': pandas.__version__, 'scipy': scipy.__version__}))",
].join('\n');

const checked = new Map<string, Promise<PythonInfo>>();

/**
 * Checks once per interpreter path that Python 3 with numpy, scikit-learn and pandas can be run,
 * and resolves to their versions. Rejects with a {@link PythonUnavailableError} that explains the
 * install otherwise.
 */
export function checkPython(python: string = DEFAULT_PYTHON): Promise<PythonInfo> {
  let pending = checked.get(python);
  if (!pending) {
    pending = probe(python);
    checked.set(python, pending);
    pending.catch(() => checked.delete(python));
  }
  return pending;
}

function probe(python: string): Promise<PythonInfo> {
  return new Promise((resolve, reject) => {
    execFile(
      python,
      ['-I', '-c', PROBE],
      { timeout: 60_000, env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' } },
      (error, stdout, stderr) => {
        if (error) {
          const code = (error as NodeJS.ErrnoException).code;
          const detail =
            code === 'ENOENT'
              ? 'that file does not exist'
              : code === 'EACCES'
                ? 'that file is not executable'
                : /ModuleNotFoundError: No module named '([^']+)'/.exec(stderr)?.[1]
                  ? `the module ${/No module named '([^']+)'/.exec(stderr)?.[1]} is missing`
                  : `running it failed (${lastLine(stderr) || error.message})`;
          reject(new PythonUnavailableError(python, detail));
          return;
        }
        try {
          const parsed = JSON.parse(stdout) as Omit<PythonInfo, 'python'>;
          resolve({ python, ...parsed });
        } catch {
          reject(new PythonUnavailableError(python, `its output was not understood: ${stdout}`));
        }
      },
    );
  });
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1] ?? '';
}
