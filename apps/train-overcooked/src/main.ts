#!/usr/bin/env node
// npm run train:overcooked -- [train|eval] [options]   (--help lists every option)
import { runMain } from '@poad/trainer';
import { overcookedApp } from './spec.js';

await runMain(overcookedApp);
