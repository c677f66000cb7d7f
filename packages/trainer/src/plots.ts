import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type MetricsRow, svgToPng, writeFileAtomicSync } from '@poad/run-kit';
import { learningCurveSvg } from './learning-curve.js';

export { runningMean } from './learning-curve.js';

/** Redraws `learning-curve.svg` and `.png` from the metrics rows (see {@link learningCurveSvg}). */
export async function writeLearningCurve(
  dir: string,
  rows: readonly MetricsRow[],
  title: string,
): Promise<void> {
  const svg = learningCurveSvg(rows, title);
  writeFileAtomicSync(join(dir, 'learning-curve.svg'), svg);
  try {
    writeFileAtomicSync(join(dir, 'learning-curve.png'), await svgToPng(svg));
  } catch (err) {
    writeFileSync(join(dir, 'learning-curve.png.error.txt'), String((err as Error).message));
  }
}
