import { tokenGae } from './tokenGae.js';
import type { ActionGaeOptions, GaeResult, TokenGaeOptions, TokenSegment } from './types.js';

/**
 * Options of the named token-level variants: γ and λ, the inner-action λ_w (default λ), plus γ_w
 * where the variant allows it.
 */
export interface PresetOptions extends ActionGaeOptions {
  intraLambda?: number;
}

/**
 * Makes a token-level advantage function with some options fixed, e.g.
 * `makeTokenGae({ intraGamma: 0.9 })` for an NTPO ablation with γ_w = 0.9.
 */
export function makeTokenGae(
  fixed: Omit<TokenGaeOptions, 'gamma' | 'lambda'>,
): (segment: TokenSegment, options: PresetOptions, out?: GaeResult) => GaeResult {
  return (segment, options, out) => tokenGae(segment, { ...options, ...fixed }, out);
}

/** POAD: the BAD backup, γ_w = 1 inside an action and γ between actions. */
export function poad(segment: TokenSegment, options: PresetOptions, out?: GaeResult): GaeResult {
  return tokenGae(
    segment,
    {
      gamma: options.gamma,
      lambda: options.lambda,
      intraLambda: options.intraLambda,
      intraGamma: 1,
      bootstrap: 'next-first-token',
    },
    out,
  );
}

/**
 * NTPO: every token is a step, discounted by γ_w (default γ) inside an action. With γ_w < 1 the
 * token-level optimum differs from the action-level one (see `ntpoDiscrepancy`).
 */
export function ntpo(
  segment: TokenSegment,
  options: PresetOptions & { intraGamma?: number },
  out?: GaeResult,
): GaeResult {
  return tokenGae(
    segment,
    {
      gamma: options.gamma,
      lambda: options.lambda,
      intraLambda: options.intraLambda,
      intraGamma: options.intraGamma ?? options.gamma,
      bootstrap: 'next-first-token',
    },
    out,
  );
}

/**
 * The ARCHER variant of the reference code: NTPO inside actions, but an action's last token
 * bootstraps from the value before the next action's last token.
 */
export function archer(segment: TokenSegment, options: PresetOptions, out?: GaeResult): GaeResult {
  return tokenGae(
    segment,
    {
      gamma: options.gamma,
      lambda: options.lambda,
      intraLambda: options.intraLambda,
      intraGamma: options.gamma,
      bootstrap: 'next-last-token',
    },
    out,
  );
}
