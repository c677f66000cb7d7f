import { UserError } from '@poad/config';

/** What went wrong with a checkpoint, adapter, tokenizer or safetensors file. */
export type CheckpointErrorCode =
  /** A required file is absent. */
  | 'missing_file'
  /** `config.json` names a `model_type` this package does not implement. */
  | 'unknown_model_type'
  /** A configuration file is malformed or asks for something unsupported. */
  | 'invalid_config'
  /** A tensor the architecture needs is absent. */
  | 'missing_tensor'
  /** A tensor has a shape that does not fit the configuration. */
  | 'shape_mismatch'
  /** Embedding, head or tokenizer size disagrees with `vocab_size`. */
  | 'vocab_mismatch'
  /** The file ends before the data its header promises. */
  | 'truncated'
  /** The header or the data layout breaks the safetensors format. */
  | 'corrupt'
  /** The header length field is larger than any sane header (a hostile or garbage file). */
  | 'hostile_header'
  /** The file stores a dtype this reader does not convert. */
  | 'unsupported_dtype'
  /** Tensors handed to a writer are inconsistent (shape vs data length, bad names). */
  | 'invalid_tensor'
  /** A tokenizer file could not be loaded. */
  | 'tokenizer'
  /** A model reference is neither a folder, an embedded name nor `ORG/NAME[@REVISION]`. */
  | 'invalid_model_id'
  /** The Hub has no repository of that name (or it is private and no token was sent). */
  | 'repo_not_found'
  /** The repository is gated and the token is missing or has not been granted access. */
  | 'gated'
  /** The Hub rejected the token itself (invalid or revoked). */
  | 'unauthorized'
  /** The repository has no branch, tag or commit of that name. */
  | 'revision_not_found'
  /** The repository holds weights only in formats other than safetensors. */
  | 'no_safetensors'
  /** Offline mode, and the cache has no complete copy of the model. */
  | 'offline_not_cached'
  /** The Hub (or mirror) could not be reached, or the connection broke. */
  | 'network'
  /** The Hub answered in a way this client does not understand (5xx, missing headers). */
  | 'hub_response'
  /** The cache could not be written: disk full, no permission, read-only. */
  | 'cache_write'
  /** A downloaded file's hash or size differs from what the Hub lists. */
  | 'checksum';

/**
 * The one error type of the file layer. `file` names the file (or folder) at fault and `tensor`
 * the tensor, when one is involved; `code` tells the cases apart without parsing messages.
 */
export class CheckpointError extends UserError {
  override readonly name: string = 'CheckpointError';
  /** Which kind of problem this is. */
  readonly code: CheckpointErrorCode;
  /** The file or folder at fault. */
  readonly file: string;
  /** The tensor at fault, when one is involved. */
  readonly tensor: string | undefined;

  constructor(
    code: CheckpointErrorCode,
    file: string,
    message: string,
    tensor?: string,
    options?: { cause?: unknown },
  ) {
    const where = tensor === undefined ? file : `${file}, tensor "${tensor}"`;
    super(`${where}: ${message}`, options);
    this.code = code;
    this.file = file;
    this.tensor = tensor;
  }
}

/** A `CheckpointError` whose message is `what`, then the message of the error that caused it. */
export function checkpointErrorFrom(
  code: CheckpointErrorCode,
  file: string,
  what: string,
  cause: unknown,
): CheckpointError {
  return new CheckpointError(code, file, `${what}: ${(cause as Error).message}`, undefined, {
    cause,
  });
}

/** True when `e` is a {@link CheckpointError}, optionally of the given code. */
export function isCheckpointError(e: unknown, code?: CheckpointErrorCode): e is CheckpointError {
  return e instanceof CheckpointError && (code === undefined || e.code === code);
}

/** Where a {@link HubError} happened, besides its code and message. */
export interface HubErrorDetails {
  /** The revision asked for, when one was. */
  revision?: string;
  /** The HTTP status of the failing answer, when there was one. */
  status?: number;
  /** The local path involved (cache folder, blob), when there was one. */
  path?: string;
  /** The underlying error. */
  cause?: unknown;
}

/**
 * A failure to find or download a model from the Hugging Face Hub (or its cache). `file` (and the
 * start of the message) is the model id as given, e.g. `Qwen/Qwen2.5-0.5B-Instruct@main`; the
 * message is one line that says what happened and how to fix it.
 */
export class HubError extends CheckpointError {
  override readonly name: string = 'HubError';
  /** The repository id, `ORG/NAME`. */
  readonly repo: string;
  /** The revision asked for, when one was. */
  readonly revision: string | undefined;
  /** The HTTP status of the failing answer, when there was one. */
  readonly status: number | undefined;
  /** The local path involved, when there was one. */
  readonly path: string | undefined;

  constructor(
    code: CheckpointErrorCode,
    repo: string,
    message: string,
    details: HubErrorDetails = {},
  ) {
    const id = details.revision === undefined ? repo : `${repo}@${details.revision}`;
    super(code, id, message.replace(/\s*\n\s*/g, ' '), undefined, { cause: details.cause });
    this.repo = repo;
    this.revision = details.revision;
    this.status = details.status;
    this.path = details.path;
  }
}

/** True when `e` is a {@link HubError}, optionally of the given code. */
export function isHubError(e: unknown, code?: CheckpointErrorCode): e is HubError {
  return e instanceof HubError && (code === undefined || e.code === code);
}
