#!/usr/bin/env node
// npm run train:datascicoding -- [train|eval] --dataset NAME [options]   (--help lists every option)
import { runMain } from '@poad/trainer';
import { dataSciApp } from './spec.js';

await runMain(dataSciApp);
