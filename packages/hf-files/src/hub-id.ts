import { HubError } from './errors.js';

/**
 * What a model reference names: a repository on the Hugging Face Hub (`ORG/NAME[@REVISION]`), a
 * folder on disk, or a bare name (no `/`) that the caller resolves itself, such as the embedded
 * models `default`, `default-code` and `informative-prior`.
 */
export type ModelId =
  | { kind: 'hub'; repo: string; revision: string | undefined; spec: string }
  | { kind: 'path'; path: string; spec: string }
  | { kind: 'name'; name: string; spec: string };

const PART = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;
const COMMIT = /^[0-9a-f]{40}$/;

/** True for a full 40-digit lowercase commit hash. */
export function isCommitHash(revision: string): boolean {
  return COMMIT.test(revision);
}

function validPart(part: string): boolean {
  return part.length <= 96 && PART.test(part) && !part.includes('--') && !part.includes('..');
}

/** True when `repo` is a valid `ORG/NAME` repository id (the Hub's own rules for names). */
export function isHubRepoId(repo: string): boolean {
  const parts = repo.split('/');
  return (
    parts.length === 2 && validPart(parts[0]!) && validPart(parts[1]!) && !repo.endsWith('.git')
  );
}

/** True when `revision` can be a branch, tag or commit name (`main`, `v1.0`, `refs/pr/1`, a hash). */
export function isValidRevision(revision: string): boolean {
  return (
    revision.length > 0 &&
    revision.length <= 256 &&
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    !/[\s\x00-\x1f\x7f~^:?*[\\]/.test(revision) &&
    !revision.startsWith('/') &&
    !revision.endsWith('/') &&
    !revision.split('/').some((s) => s === '' || s === '.' || s === '..')
  );
}

function looksLikePath(spec: string): boolean {
  return (
    spec.startsWith('/') ||
    spec.startsWith('.') ||
    spec.startsWith('~') ||
    spec.includes('\\') ||
    /^[A-Za-z]:/.test(spec)
  );
}

/**
 * Classify a model reference without touching the disk. `ORG/NAME` and `ORG/NAME@REVISION` with
 * valid Hub names are `hub`; anything starting with `/`, `.`, `~`, a drive letter or holding a
 * backslash, and anything else with a `/` that is not a valid Hub id, is a `path`; a word without
 * `/` is a `name` (never a Hub id: the Hub's legacy ids without an organisation are not
 * accepted). A folder that exists under the same relative path as a Hub id wins over the Hub in
 * {@link resolveModelId}, as in Python's `from_pretrained`.
 */
export function parseModelId(spec: string): ModelId {
  if (typeof spec !== 'string' || spec.length === 0) {
    throw new HubError(
      'invalid_model_id',
      String(spec),
      'the model reference is empty; write ORG/NAME[@REVISION], a folder path, or an embedded model name',
    );
  }
  if (looksLikePath(spec)) return { kind: 'path', path: spec, spec };
  const at = spec.indexOf('@');
  const repo = at < 0 ? spec : spec.slice(0, at);
  const revision = at < 0 ? undefined : spec.slice(at + 1);
  if (!repo.includes('/')) return { kind: 'name', name: spec, spec };
  if (isHubRepoId(repo) && (revision === undefined || isValidRevision(revision))) {
    return { kind: 'hub', repo, revision, spec };
  }
  return { kind: 'path', path: spec, spec };
}

/**
 * Why `spec` (classified as a path) is not a valid Hub id, or undefined when it does not look like
 * an attempt at one (it has more than one `/` or path syntax).
 */
export function hubIdProblem(spec: string): string | undefined {
  if (looksLikePath(spec)) return undefined;
  const at = spec.indexOf('@');
  const repo = at < 0 ? spec : spec.slice(0, at);
  if (repo.split('/').length !== 2) return undefined;
  if (!isHubRepoId(repo)) {
    return `"${repo}" is not a valid repository id (ORG/NAME of letters, digits, "-", "_" and ".", at most 96 characters each, no "--" or "..")`;
  }
  if (at >= 0 && !isValidRevision(spec.slice(at + 1))) {
    return `"${spec.slice(at + 1)}" is not a valid revision (a branch, tag or commit hash after "@")`;
  }
  return undefined;
}
