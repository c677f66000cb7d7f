import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRunDir, runName } from '../src/runDir.js';

describe('createRunDir', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'poad-rundir-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('creates the directory (and its parents) with config.json and environment.json', () => {
    const dir = createRunDir(join(root, 'runs'), 'demo-s1', { seed: 1 }, { backend: 'cpu' });
    expect(dir).toBe(join(root, 'runs', 'demo-s1'));
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'environment.json']);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).toEqual({ seed: 1 });
    const env = JSON.parse(readFileSync(join(dir, 'environment.json'), 'utf8'));
    expect(env).toMatchObject({ backend: 'cpu', node: process.version });
  });

  it('refuses a name the user chose when it exists, and leaves that directory alone', () => {
    const dir = createRunDir(root, 'mine', { seed: 1 }, {});
    expect(() => createRunDir(root, 'mine', { seed: 2 }, {})).toThrow(
      /run directory .*mine already exists; pick another --run-name or use --resume/,
    );
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).toEqual({ seed: 1 });
    expect(readdirSync(root)).toEqual(['mine']);
  });

  it('gives a generated name that is taken (two runs in the same second) the next free suffix', () => {
    const name = runName(['env', 'poad', 's1'], new Date(Date.UTC(2026, 10, 26, 0, 22, 18)));
    expect(name).toBe('env-poad-s1-20261126-002218');
    const dirs = [1, 2, 3].map((seed) => createRunDir(root, name, { seed }, {}, { unique: true }));
    expect(dirs).toEqual([join(root, name), join(root, `${name}-2`), join(root, `${name}-3`)]);
    const seeds = dirs.map((d) => JSON.parse(readFileSync(join(d, 'config.json'), 'utf8')).seed);
    expect(seeds).toEqual([1, 2, 3]);
  });
});
