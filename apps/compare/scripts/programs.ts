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

/** Ensembles whose members are themselves estimators: such a program is counted as the ensemble. */
const ENSEMBLES = new Set([
  'VotingClassifier',
  'StackingClassifier',
  'BaggingClassifier',
  'CalibratedClassifierCV',
]);

/**
 * The kind of estimator a program builds, as the prior's report (`npm run prior -w
 * @poad/train-datascicoding`) counts kinds: the first ensemble it constructs, else the last
 * scikit-learn estimator class it constructs (a pipeline's final step), else `none`.
 */
export function estimatorKind(body: string): string {
  const constructed = Array.from(
    body.matchAll(/\b([A-Z][A-Za-z]*(?:Classifier|Regression|NB|Analysis|CV))\(/g),
    (m) => m[1]!,
  );
  return constructed.find((c) => ENSEMBLES.has(c)) ?? constructed.at(-1) ?? 'none';
}
