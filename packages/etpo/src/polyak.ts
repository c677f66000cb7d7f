import * as tf from '@tensorflow/tfjs-core';
import { EtpoArgumentError } from './errors.js';

/**
 * Moves each target variable towards its online counterpart: θ̄ ← (1 − τ)·θ̄ + τ·θ (ETPO's target
 * critic; τ = 0.005 by default, i.e. the reference code's 0.995 decay).
 */
export function polyakUpdate(
  target: readonly tf.Variable[],
  online: readonly tf.Variable[],
  tau = 0.005,
): void {
  if (!(tau > 0 && tau <= 1))
    throw new EtpoArgumentError('tau', `expected a number in (0, 1], got ${tau}`);
  if (target.length !== online.length) {
    throw new EtpoArgumentError(
      'target',
      `expected ${online.length} variables (one per online variable), got ${target.length}`,
    );
  }
  target.forEach((t, i) => {
    const o = online[i]!;
    if (t.shape.join() !== o.shape.join()) {
      throw new EtpoArgumentError(
        `target[${i}]`,
        `shape [${t.shape.join(', ')}] differs from the online variable's [${o.shape.join(', ')}]`,
      );
    }
    tf.tidy(() => t.assign(tf.add(tf.mul(1 - tau, t), tf.mul(tau, o))));
  });
}
