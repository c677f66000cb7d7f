#!/usr/bin/env node
// npm run train:virtualhome -- [train|eval] [options]   (--help lists every option)
import { runMain } from '@poad/trainer';
import { virtualHomeApp } from './spec.js';

await runMain(virtualHomeApp);
