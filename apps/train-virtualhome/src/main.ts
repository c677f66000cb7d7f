#!/usr/bin/env node
// npm run train:virtualhome -- [train|eval] [options]   (--help lists every option)
import { runCli } from '@poad/trainer-cli';
import { virtualHomeApp } from './spec.js';

process.exitCode = await runCli(virtualHomeApp, process.argv.slice(2));
