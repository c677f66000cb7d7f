#!/usr/bin/env node
// npm run train:overcooked -- [train|eval] [options]   (--help lists every option)
import { runCli } from '@poad/trainer-cli';
import { overcookedApp } from './spec.js';

process.exitCode = await runCli(overcookedApp, process.argv.slice(2));
