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
  | 'tokenizer';

/**
 * The one error type of the file layer. `file` names the file (or folder) at fault and `tensor`
 * the tensor, when one is involved; `code` tells the cases apart without parsing messages.
 */
export class CheckpointError extends Error {
  override readonly name = 'CheckpointError';
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

/** True when `e` is a {@link CheckpointError}, optionally of the given code. */
export function isCheckpointError(e: unknown, code?: CheckpointErrorCode): e is CheckpointError {
  return e instanceof CheckpointError && (code === undefined || e.code === code);
}
