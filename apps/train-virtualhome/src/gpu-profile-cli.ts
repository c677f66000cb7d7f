#!/usr/bin/env node
// npm run gpu:profile [-- TRAINING FLAGS…] [--json FILE]: the GPU work of the default training
// command by phase (see gpu-profile.ts).
import { writeFileSync } from 'node:fs';
import { releaseBackend } from '@poad/trainer';
import { profileGpuWork, profileTable } from './gpu-profile.js';
import { virtualHomeApp } from './spec.js';

const argv = process.argv.slice(2);
const j = argv.indexOf('--json');
const jsonFile = j >= 0 ? argv[j + 1] : undefined;
if (j >= 0) argv.splice(j, 2);
try {
  const profile = await profileGpuWork(virtualHomeApp, argv);
  console.log(profileTable(profile));
  if (jsonFile) writeFileSync(jsonFile, `${JSON.stringify(profile, null, 2)}\n`);
} finally {
  await releaseBackend();
}
