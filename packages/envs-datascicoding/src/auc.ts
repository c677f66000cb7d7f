/**
 * ROC AUC exactly as scikit-learn's `roc_auc_score` computes it for this task, from predicted
 * probabilities and true labels. Computed here rather than in the sandbox so that a program
 * cannot report a score of its own.
 */

/** Why a split could not be scored (mirrors the errors scikit-learn raises). */
export class AucError extends Error {
  override readonly name = 'AucError';
}

/**
 * Area under the ROC curve of `scores` for the binary labels `positive` (true = positive class).
 * Equals the trapezoidal area of the ROC curve, i.e. the Mann-Whitney statistic with ties
 * counted as one half.
 */
export function binaryRocAuc(positive: ArrayLike<boolean>, scores: ArrayLike<number>): number {
  const n = scores.length;
  if (positive.length !== n) throw new AucError('labels and scores differ in length');
  const order = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => (scores[a] as number) - (scores[b] as number),
  );
  let positives = 0;
  let rankSum = 0;
  let i = 0;
  while (i < n) {
    let j = i;
    const value = scores[order[i] as number] as number;
    while (j + 1 < n && scores[order[j + 1] as number] === value) j++;
    const averageRank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) {
      if (positive[order[k] as number]) {
        positives++;
        rankSum += averageRank;
      }
    }
    i = j + 1;
  }
  const negatives = n - positives;
  if (positives === 0 || negatives === 0) {
    throw new AucError('only one class is present in this test split, so ROC AUC is undefined');
  }
  return (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}

/**
 * Scores one split: `proba` is row-major `rows × cols` from `predict_proba`, `labels` the true
 * labels 0..k-1. Two columns: AUC of column 1 with the larger label as positive. More than two:
 * one-vs-one macro average over label pairs, which requires rows summing to 1 and one column per
 * label present.
 */
export function splitRocAuc(
  labels: ArrayLike<number>,
  proba: ArrayLike<number>,
  cols: number,
): number {
  const rows = labels.length;
  if (!Number.isInteger(cols) || cols < 1 || proba.length !== rows * cols) {
    throw new AucError(`predict_proba returned ${proba.length} values, expected ${rows} rows`);
  }
  for (let i = 0; i < proba.length; i++) {
    if (!Number.isFinite(proba[i] as number))
      throw new AucError('predict_proba returned NaN or infinity');
  }
  const present = [...new Set(Array.from(labels))].sort((a, b) => a - b);
  if (cols === 2) {
    if (present.length !== 2) {
      throw new AucError(
        present.length < 2
          ? 'only one class is present in this test split, so ROC AUC is undefined'
          : `predict_proba returned 2 columns but the test split has ${present.length} classes`,
      );
    }
    const top = present[1] as number;
    const positive = Array.from(labels, (l) => l === top);
    const scores = Array.from({ length: rows }, (_, r) => proba[r * cols + 1] as number);
    return binaryRocAuc(positive, scores);
  }
  if (cols < 2)
    throw new AucError('predict_proba returned a single column; it needs one per class');
  if (present.length !== cols) {
    throw new AucError(
      `the test split has ${present.length} classes but predict_proba returned ${cols} columns`,
    );
  }
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    for (let c = 0; c < cols; c++) sum += proba[r * cols + c] as number;
    if (!(Math.abs(1 - sum) <= 1e-8 + 1e-5 * Math.abs(sum))) {
      throw new AucError('predict_proba rows must sum to 1 for a multi-class ROC AUC');
    }
  }
  const encoded = Array.from(labels, (l) => present.indexOf(l));
  let total = 0;
  let pairs = 0;
  for (let a = 0; a < cols; a++) {
    for (let b = a + 1; b < cols; b++) {
      const rowsAB: number[] = [];
      for (let r = 0; r < rows; r++) if (encoded[r] === a || encoded[r] === b) rowsAB.push(r);
      const aTrue = rowsAB.map((r) => encoded[r] === a);
      const bTrue = rowsAB.map((r) => encoded[r] === b);
      const aAuc = binaryRocAuc(
        aTrue,
        rowsAB.map((r) => proba[r * cols + a] as number),
      );
      const bAuc = binaryRocAuc(
        bTrue,
        rowsAB.map((r) => proba[r * cols + b] as number),
      );
      total += (aAuc + bAuc) / 2;
      pairs++;
    }
  }
  return total / pairs;
}

/** Mean and population standard deviation. */
export function meanAndStd(values: readonly number[]): { mean: number; std: number } {
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length;
  return { mean, std: Math.sqrt(variance) };
}
