/** A bad setting or input of a group-relative trainer; the message names it and what is expected. */
export class GroupConfigError extends Error {
  override readonly name = 'GroupConfigError';
  constructor(
    readonly input: string,
    detail: string,
  ) {
    super(`${input}: ${detail}`);
  }
}
