import { InputError } from '@poad/config';

/** A bad setting or input of a group-relative trainer; the message names it (its `input`) and what is expected. */
export class GroupConfigError extends InputError {
  override name = 'GroupConfigError';
}
