/** A bad argument to an ETPO function; the message names it and what is expected. */
export class EtpoArgumentError extends Error {
  override readonly name = 'EtpoArgumentError';
  constructor(
    readonly argument: string,
    detail: string,
  ) {
    super(`${argument}: ${detail}`);
  }
}
