// What the summarising scripts read of a DataSciCoding run's archived files.
import { readText } from '../src/archive-file.js';

/** One line of a run's programs.jsonl. */
export interface Program {
  iteration: number;
  envStep: number;
  reward: number;
  ran: boolean;
  body: string;
}

/** The rows of a JSON-lines file (on disk, gzipped beside, or in an archive: src/archive-file.ts). */
export function readJsonl<T>(file: string): T[] {
  return readText(file)
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}
