// Test-only: one process of the concurrency test. Downloads the model named on the command line
// with the environment it was given (HF_ENDPOINT, HF_HUB_CACHE) and prints the snapshot as JSON.
import { snapshotDownload } from '../src/hub-download.js';

const id = process.argv[2] ?? '';
snapshotDownload(id, { retries: 0 }).then(
  (snap) => {
    process.stdout.write(`${JSON.stringify(snap)}\n`);
  },
  (e: unknown) => {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exitCode = 1;
  },
);
