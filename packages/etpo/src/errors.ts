import { InputError } from '@poad/config';

/** A bad argument to an ETPO function; the message names it (its `input`) and what is expected. */
export class EtpoArgumentError extends InputError {
  override name = 'EtpoArgumentError';
}
