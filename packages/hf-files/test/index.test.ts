import { describe, expect, it } from 'vitest';
import * as io from '../src/index.js';

describe('src/io public surface', () => {
  it('exports the functions the model code relies on', () => {
    const fns = [
      'parseSafetensors',
      'serializeSafetensors',
      'readSafetensorsFile',
      'readSafetensorsHeader',
      'writeSafetensorsFile',
      'writeFileAtomic',
      'parseLlamaConfig',
      'expectedLlamaTensorNames',
      'expectedLlamaTensors',
      'validateLlamaTensors',
      'readCheckpoint',
      'writeCheckpoint',
      'readPeftAdapter',
      'writePeftAdapter',
      'peftKey',
      'parsePeftKey',
      'loadTokenizer',
      'trainByteLevelTokenizer',
      'isCheckpointError',
    ] as const;
    const surface: Record<string, unknown> = { ...io };
    for (const f of fns) expect(typeof surface[f], f).toBe('function');
    expect(new io.CheckpointError('corrupt', 'f', 'm', 't')).toBeInstanceOf(Error);
    expect(io.DEFAULT_MAX_HEADER_BYTES).toBe(100_000_000);
  });
});
