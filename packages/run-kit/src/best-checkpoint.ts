import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OptionError } from '@poad/config';
import {
  type CheckpointMeta,
  type CheckpointRef,
  CheckpointWriteError,
  listCheckpoints,
} from './checkpoint.js';
import { injectCheckpointFault } from './checkpoint-faults.js';

/*
 * A run's best checkpoint, `checkpoints/best/`, beside the latest ones: written into a hidden
 * temporary folder and swapped into place, so that a kill at any moment leaves the previous best
 * or the new one (a kill between the two renames leaves the previous one as `.best.prev.tmp`,
 * which {@link bestCheckpoint} takes back).
 */

const BEST = 'best';
const PREVIOUS = '.best.prev.tmp';

/**
 * Writes the best checkpoint: `populate` fills a temporary folder (as for `saveCheckpointWith`),
 * then `meta.json` (with the iteration and what made it best), then it replaces the previous
 * best. Returns its folder.
 * @throws CheckpointWriteError when the disk refuses a write; the previous best stays.
 */
export async function saveBestCheckpoint(
  runDir: string,
  meta: CheckpointMeta,
  populate: (dir: string) => Promise<void>,
): Promise<string> {
  const root = join(runDir, 'checkpoints');
  const tmp = join(root, `.best.${process.pid}.tmp`);
  const final = join(root, BEST);
  const previous = join(root, PREVIOUS);
  try {
    mkdirSync(root, { recursive: true });
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    await populate(tmp);
    writeFileSync(join(tmp, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
    recoverBest(root);
    injectCheckpointFault('best-aside', meta.iteration, final);
    if (existsSync(final)) renameSync(final, previous);
    injectCheckpointFault('best-swap', meta.iteration, final);
    renameSync(tmp, final);
    rmSync(previous, { recursive: true, force: true });
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    recoverBest(root);
    const code = (err as NodeJS.ErrnoException | null)?.code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code))
      throw new CheckpointWriteError(final, existsSync(final) ? final : null, err as Error);
    throw err;
  }
  return final;
}

/** Puts back a previous best that a kill left aside (see the module's comment). */
function recoverBest(root: string): void {
  const final = join(root, BEST);
  const previous = join(root, PREVIOUS);
  if (!existsSync(previous)) return;
  if (existsSync(final)) rmSync(previous, { recursive: true, force: true });
  else renameSync(previous, final);
}

/** The best checkpoint of a run directory (with a readable meta.json), or null. */
export function bestCheckpoint(runDir: string): CheckpointRef | null {
  const root = join(runDir, 'checkpoints');
  if (!existsSync(root)) return null;
  recoverBest(root);
  const dir = join(root, BEST);
  try {
    const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as CheckpointMeta;
    return typeof meta?.iteration === 'number' ? { dir, name: BEST, meta } : null;
  } catch {
    return null;
  }
}

/** Which checkpoint of a run to use: `latest` (the default), `best` or `iter-N`. */
export type CheckpointChoice = 'latest' | 'best' | `iter-${number}`;

/** Reads a `--checkpoint` value. @throws OptionError naming the forms it takes. */
export function parseCheckpointChoice(value: string, label = '--checkpoint'): CheckpointChoice {
  if (value === 'latest' || value === 'best' || /^iter-[0-9]+$/.test(value))
    return value as CheckpointChoice;
  throw new OptionError(
    `${label}: ${JSON.stringify(value)} is not a checkpoint; use latest, best or iter-N (e.g. iter-40)`,
  );
}

/**
 * The checkpoints to try for `choice`, in order: `latest` gives every complete checkpoint from
 * the newest (so that a broken one falls back to the one before); `best` and `iter-N` that one
 * alone.
 * @throws OptionError when the run has no such checkpoint, naming the ones it has.
 */
export function checkpointsFor(runDir: string, choice: CheckpointChoice): CheckpointRef[] {
  const all = listCheckpoints(runDir);
  if (choice === 'latest') return all;
  const have = () =>
    [
      ...all.map((c) => `iter-${c.meta.iteration}`),
      ...(bestCheckpoint(runDir) ? ['best'] : []),
    ].join(', ') || 'none yet';
  if (choice === 'best') {
    const best = bestCheckpoint(runDir);
    if (!best)
      throw new OptionError(
        `--checkpoint best: ${runDir} keeps no best checkpoint (it was trained without --keep-best); it has: ${have()}`,
      );
    return [best];
  }
  const iteration = Number(choice.slice('iter-'.length));
  const found = all.find((c) => c.meta.iteration === iteration);
  const best = bestCheckpoint(runDir);
  if (found) return [found];
  if (best?.meta.iteration === iteration) return [best];
  throw new OptionError(
    `--checkpoint ${choice}: ${runDir} has no such checkpoint; it has: ${have()}`,
  );
}
