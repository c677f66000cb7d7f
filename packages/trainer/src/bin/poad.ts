#!/usr/bin/env node
// The `poad` command (see ../poad.ts); the GPU device is released at the end (Dawn would otherwise
// keep the process alive).
import { releaseBackend } from '@poad/tfjs-kernels';
import { poadMain } from '../poad.js';

poadMain(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  })
  .finally(() => releaseBackend());
