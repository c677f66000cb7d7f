#!/usr/bin/env node
// One run of a comparison in a process of its own: `run-job.ts ENV [training options]`, the
// training command of ENV's app on the options (what `--jobs` above 1 starts per run).
import { runMain } from '@poad/trainer';
import { appOf } from './apps.js';

const [env = '', ...args] = process.argv.slice(2);
process.argv.splice(2, process.argv.length - 2, ...args);
await runMain(appOf(env));
