/** Stopping rule shared by the value iterations. */
export interface IterationOptions {
  /** Stop when the largest change of a state value falls below this. Default 1e-12. */
  tolerance?: number;
  /** Give up after this many sweeps (the result then has `converged: false`). Default 100000. */
  maxIterations?: number;
}

/** How a value iteration ended. */
export interface IterationReport {
  iterations: number;
  /** Largest change of a state value in the last sweep. */
  residual: number;
  converged: boolean;
}

export function iterationLimits(options: IterationOptions | undefined): {
  tolerance: number;
  maxIterations: number;
} {
  const tolerance = options?.tolerance ?? 1e-12;
  const maxIterations = options?.maxIterations ?? 100_000;
  if (!(tolerance > 0)) throw new RangeError(`\`tolerance\` must be > 0, got ${tolerance}`);
  if (!(Number.isInteger(maxIterations) && maxIterations >= 1)) {
    throw new RangeError(`\`maxIterations\` must be a positive integer, got ${maxIterations}`);
  }
  return { tolerance, maxIterations };
}
