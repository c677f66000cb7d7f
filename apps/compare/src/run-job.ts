#!/usr/bin/env node
// One run of a comparison in a process of its own: `run-job.ts ENV [training options]`, the
// training command of ENV's app on the options (what `--jobs` above 1 and a queue worker start
// per run).
import { runMain } from '@poad/trainer';
import { appOf } from './apps.js';

// Started by a queue worker, with an IPC channel: when the worker dies (even by SIGKILL) the
// channel closes and this run stops at once, so that no orphan goes on writing a run that another
// worker takes over from its last checkpoint.
if (process.send) {
  process.channel?.unref();
  process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
}

const [env = '', ...args] = process.argv.slice(2);
process.argv.splice(2, process.argv.length - 2, ...args);
await runMain(appOf(env));
