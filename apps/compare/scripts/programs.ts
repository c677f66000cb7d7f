// What the summarising scripts read of a DataSciCoding run's archived files.
import { readFileSync } from 'node:fs';

/** One line of a run's programs.jsonl. */
export interface Program {
  iteration: number;
  envStep: number;
  reward: number;
  ran: boolean;
  body: string;
}

/** The rows of a JSON-lines file. */
export function readJsonl<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}
