/**
 * Fault injection for tests of checkpoint writing. When the test runner is active
 * (`VITEST=true`, which vitest sets and child processes inherit) and
 * `POAD_TEST_CHECKPOINT_FAULT=STAGE:ACTION[@ITERATION]` is set, the writer stops at STAGE of
 * the checkpoint of ITERATION (of every checkpoint when omitted):
 *
 * - stages, in order: `files` (the files are in the temporary directory), `meta` (about to write
 *   `meta.json`), `rename` (about to rename the directory into place), `latest` (the new
 *   `latest.json` is complete in its temporary file, about to be renamed), `prune` (about to
 *   remove older checkpoints); and of the best checkpoint (`saveBestCheckpoint`): `best-aside`
 *   (complete in its temporary folder, about to set the previous best aside), `best-swap` (the
 *   previous best set aside, about to rename the new one into place);
 * - actions: `kill` (the process sends itself SIGKILL, as `kill -9` would), `enospc` and
 *   `eacces` (the write fails with that system error).
 *
 * Outside the test runner the variable is ignored.
 */
export const CHECKPOINT_FAULT_STAGES = [
  'files',
  'meta',
  'rename',
  'latest',
  'prune',
  'best-aside',
  'best-swap',
] as const;

export type CheckpointFaultStage = (typeof CHECKPOINT_FAULT_STAGES)[number];

const SPEC =
  /^(files|meta|rename|latest|prune|best-aside|best-swap):(kill|enospc|eacces)(?:@(\d+))?$/;

export function injectCheckpointFault(
  stage: CheckpointFaultStage,
  iteration: number,
  path: string,
): void {
  const spec = process.env.POAD_TEST_CHECKPOINT_FAULT;
  if (!spec || process.env.VITEST !== 'true') return;
  const m = SPEC.exec(spec);
  if (!m) {
    throw new Error(
      `POAD_TEST_CHECKPOINT_FAULT=${spec}: expected STAGE:ACTION[@ITERATION] with STAGE one of ${CHECKPOINT_FAULT_STAGES.join(', ')} and ACTION kill, enospc or eacces`,
    );
  }
  if (m[1] !== stage || (m[3] !== undefined && Number(m[3]) !== iteration)) return;
  if (m[2] === 'kill') {
    process.kill(process.pid, 'SIGKILL');
    // The signal is delivered asynchronously: block until it lands.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  }
  const [code, errno, text] =
    m[2] === 'enospc'
      ? ['ENOSPC', -28, 'no space left on device']
      : ['EACCES', -13, 'permission denied'];
  throw Object.assign(new Error(`${code}: ${text}, write '${path}'`), {
    code,
    errno,
    syscall: 'write',
    path,
  });
}
