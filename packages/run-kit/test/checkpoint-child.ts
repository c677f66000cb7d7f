// Run as a child process by checkpoint.test.ts and lock.test.ts:
//   checkpoint-child.ts save RUN_DIR    writes checkpoints 1 and 2 (the test injects a fault)
//   checkpoint-child.ts lock RUN_DIR    takes the run's lock, says so, and waits to be killed
//   checkpoint-child.ts best RUN_DIR    writes the best checkpoint of iterations 1 and 2

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { saveBestCheckpoint } from '../src/best-checkpoint.js';
import { saveCheckpoint, saveCheckpointWith } from '../src/checkpoint.js';

const [mode, dir] = process.argv.slice(2) as [string, string];
if (mode === 'save') {
  saveCheckpoint(
    dir,
    { iteration: 1 },
    { 'w.bin': new Uint8Array([1, 1, 1]), 'state.json': '{"it":1}' },
  );
  await saveCheckpointWith(dir, { iteration: 2 }, async (tmp) => {
    writeFileSync(join(tmp, 'w.bin'), new Uint8Array([2, 2, 2]));
    writeFileSync(join(tmp, 'state.json'), '{"it":2}');
  });
  process.stdout.write('saved\n');
} else if (mode === 'best') {
  for (const it of [1, 2])
    await saveBestCheckpoint(dir, { iteration: it }, async (tmp) => {
      writeFileSync(join(tmp, 'state.json'), JSON.stringify({ it }));
    });
  process.stdout.write('saved\n');
} else if (mode === 'lock') {
  const { lockRunDir } = await import('../src/lock.js');
  lockRunDir(dir);
  process.stdout.write('locked\n');
  setInterval(() => {}, 1000);
}
