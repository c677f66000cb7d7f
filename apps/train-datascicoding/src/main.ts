#!/usr/bin/env node
// npm run train:datascicoding -- [train|eval] --dataset NAME [options]   (--help lists every option)
import { runCli } from '@poad/trainer-cli';
import { dataSciApp } from './spec.js';

process.exitCode = await runCli(dataSciApp, process.argv.slice(2));
