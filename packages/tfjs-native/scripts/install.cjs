#!/usr/bin/env node
// Builds the optional native addon with node-gyp. Never fails the install: when the toolchain
// or the BLAS is missing, the package stays usable (stock kernels) and one line says how to
// enable the native kernels. Uses the local Node headers when present so no download is needed.
// An existing build newer than every source is kept, except under `npm rebuild` or with
// POAD_NATIVE_FORCE=1, so that routine installs in a workspace do not rebuild it.
// Environment: POAD_NATIVE_SKIP_BUILD=1 skips the build; POAD_NATIVE_VERBOSE=1 shows the output.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const logFile = path.join(root, 'build', 'install.log');
const hint =
  'apt-get install libopenblas-dev build-essential (macOS: xcode-select --install), then npm rebuild @poad/tfjs-native';

function findNodeGyp() {
  const candidates = [];
  if (process.env.npm_config_node_gyp) candidates.push(process.env.npm_config_node_gyp);
  try {
    candidates.push(require.resolve('node-gyp/bin/node-gyp.js'));
  } catch {}
  if (process.env.npm_execpath) {
    candidates.push(
      path.join(
        path.dirname(process.env.npm_execpath),
        '..',
        'node_modules',
        'node-gyp',
        'bin',
        'node-gyp.js',
      ),
    );
  }
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  candidates.push(
    path.join(
      prefix,
      'lib',
      'node_modules',
      'npm',
      'node_modules',
      'node-gyp',
      'bin',
      'node-gyp.js',
    ),
  );
  return candidates.find((c) => c && fs.existsSync(c)) || null;
}

function localNodeDir() {
  if (process.env.npm_config_nodedir) return null; // node-gyp reads it itself
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  const header = path.join(prefix, 'include', 'node', 'node_version.h');
  if (!fs.existsSync(header) || !fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h')))
    return null;
  const text = fs.readFileSync(header, 'utf8');
  const part = (name) => (text.match(new RegExp(`#define ${name} (\\d+)`)) || [])[1];
  const version = `${part('NODE_MAJOR_VERSION')}.${part('NODE_MINOR_VERSION')}.${part('NODE_PATCH_VERSION')}`;
  return version === process.versions.node ? prefix : null;
}

function upToDate(built) {
  if (!fs.existsSync(built)) return false;
  const builtAt = fs.statSync(built).mtimeMs;
  const sources = [path.join(root, 'binding.gyp'), path.join(root, 'scripts', 'blas-config.cjs')];
  for (const name of fs.readdirSync(path.join(root, 'native')))
    sources.push(path.join(root, 'native', name));
  return sources.every((file) => fs.statSync(file).mtimeMs <= builtAt);
}

function fail(reason) {
  console.log(
    `@poad/tfjs-native: native kernels not built (${reason}); TF.js keeps its stock kernels. To enable: ${hint}`,
  );
  process.exit(0);
}

function main() {
  if (process.env.POAD_NATIVE_SKIP_BUILD === '1') fail('POAD_NATIVE_SKIP_BUILD=1');
  const built = path.join(root, 'build', 'Release', 'poad_native.node');
  const force =
    process.argv.includes('--force') ||
    process.env.POAD_NATIVE_FORCE === '1' ||
    process.env.npm_command === 'rebuild';
  if (!force && upToDate(built)) {
    console.log('@poad/tfjs-native: native kernels up to date (build/Release/poad_native.node)');
    return;
  }
  const gyp = findNodeGyp();
  if (!gyp) fail('node-gyp not found');
  const args = [gyp, 'rebuild', '--release'];
  const nodedir = localNodeDir();
  if (nodedir) args.push(`--nodedir=${nodedir}`);
  const verbose = process.env.POAD_NATIVE_VERBOSE === '1';
  const res = spawnSync(process.execPath, args, {
    cwd: root,
    encoding: 'utf8',
    stdio: verbose ? 'inherit' : 'pipe',
    timeout: 300_000,
  });
  if (!verbose) {
    try {
      fs.mkdirSync(path.dirname(logFile), { recursive: true });
      fs.writeFileSync(logFile, `${res.stdout || ''}${res.stderr || ''}`);
    } catch {}
  }
  if (res.status !== 0 || !fs.existsSync(built)) {
    const why = res.error ? res.error.message : `node-gyp exited with ${res.status}`;
    fail(verbose ? why : `${why}; log: ${path.relative(process.cwd(), logFile)}`);
  }
  console.log('@poad/tfjs-native: native kernels built (build/Release/poad_native.node)');
}

try {
  main();
} catch (err) {
  fail(err?.message ? err.message : String(err));
}
