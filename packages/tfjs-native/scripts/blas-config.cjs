#!/usr/bin/env node
// Prints compiler and linker settings for the system CBLAS, for binding.gyp.
// Usage: node scripts/blas-config.cjs cflags|libs|defines
// Order: POAD_BLAS_CFLAGS/POAD_BLAS_LIBS/POAD_BLAS_DEFINES overrides, macOS Accelerate
// (unless POAD_BLAS=openblas), pkg-config openblas, pkg-config cblas, then plain -lopenblas.
'use strict';
const { execFileSync } = require('node:child_process');
const { existsSync } = require('node:fs');

function pkgConfig(args) {
  try {
    return execFileSync('pkg-config', args, { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

function detect() {
  const env = process.env;
  if (env.POAD_BLAS_LIBS) {
    return {
      cflags: env.POAD_BLAS_CFLAGS || '',
      libs: env.POAD_BLAS_LIBS,
      defines: env.POAD_BLAS_DEFINES || '',
    };
  }
  const want = (env.POAD_BLAS || '').toLowerCase();
  if (process.platform === 'darwin' && want !== 'openblas') {
    return {
      cflags: '',
      libs: '-framework Accelerate',
      defines: 'POAD_BLAS_ACCELERATE',
    };
  }
  for (const name of ['openblas', 'cblas']) {
    if (pkgConfig(['--exists', name]) === null) continue;
    const cflags = pkgConfig(['--cflags', name]);
    const libs = pkgConfig(['--libs', name]);
    if (libs === null) continue;
    return {
      cflags: cflags || '',
      libs,
      defines: name === 'openblas' ? 'POAD_BLAS_OPENBLAS' : '',
    };
  }
  const includes = [
    '/usr/include/openblas',
    '/usr/local/include/openblas',
    '/opt/homebrew/opt/openblas/include',
  ]
    .filter((dir) => existsSync(dir))
    .map((dir) => `-I${dir}`);
  return { cflags: includes.join(' '), libs: '-lopenblas', defines: 'POAD_BLAS_OPENBLAS' };
}

const what = process.argv[2];
const config = detect();
if (!(what in config)) {
  process.stderr.write('usage: node scripts/blas-config.cjs cflags|libs|defines\n');
  process.exit(1);
}
process.stdout.write(`${config[what]}\n`);
