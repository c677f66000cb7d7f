import { UserError } from '@poad/config';

/** Debian/Ubuntu packages that provide everything the scorer needs. */
export const PYTHON_INSTALL_HINT = 'apt-get install python3-sklearn python3-pandas';

/** Thrown when the configured Python interpreter is missing or lacks numpy, scikit-learn or pandas. */
export class PythonUnavailableError extends UserError {
  override readonly name = 'PythonUnavailableError';
  constructor(
    readonly python: string,
    readonly detail: string,
  ) {
    super(
      `DataSciCoding needs Python 3 with numpy, scikit-learn and pandas at ${python}, but ${detail}. ` +
        `On Debian or Ubuntu run: ${PYTHON_INSTALL_HINT} (or pass the option \`python\` pointing ` +
        'to an interpreter that has them).',
    );
  }
}

/** Thrown when `isolation: 'namespaces'` is requested but Linux namespaces cannot be used here. */
export class SandboxUnavailableError extends UserError {
  override readonly name = 'SandboxUnavailableError';
  constructor(readonly detail: string) {
    super(
      `the namespace sandbox is not available on this machine: ${detail}. It needs Linux with ` +
        "unprivileged user namespaces and util-linux's `unshare`; use isolation: 'auto' to fall " +
        "back to the basic sandbox (weaker, see the package README), or 'basic' to choose it.",
    );
  }
}

/** Thrown when a dataset cannot be found, read or turned into a classification problem. */
export class DatasetError extends UserError {
  override readonly name = 'DatasetError';
  constructor(
    readonly dataset: string,
    detail: string,
  ) {
    super(`dataset ${dataset}: ${detail}`);
  }
}

/** Thrown when an option is out of range or of the wrong kind. */
export class DataSciOptionError extends UserError {
  override readonly name = 'DataSciOptionError';
  constructor(
    readonly option: string,
    detail: string,
  ) {
    super(`option ${option}: ${detail}`);
  }
}

/** Thrown when `step` is called while the previous `step` of the same env is still running. */
export class EnvBusyError extends Error {
  override readonly name = 'EnvBusyError';
  constructor(readonly envId: string) {
    super(`${envId}: step() was called while the previous step is still running; await it first.`);
  }
}
