#!/usr/bin/env node
// npm run train:credit -- [train|eval] [options]   (--help lists every option)
import { runMain } from '@poad/trainer';
import { creditApp } from './spec.js';

await runMain(creditApp);
