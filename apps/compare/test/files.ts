// Files for the archive tests: folders written from a listing, read back as one, and seeded noise.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `n` pseudo-random bytes from `seed` (mulberry32): data deflate cannot shrink. */
export function noise(n: number, seed: number): Buffer {
  const out = Buffer.alloc(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (t ^ (t >>> 14)) & 0xff;
  }
  return out;
}

/** Writes `files` (path with `/` → contents) under `dir`; returns `dir`. */
export function tree(dir: string, files: Record<string, string | Buffer>): string {
  for (const [path, data] of Object.entries(files)) {
    const at = join(dir, ...path.split('/'));
    mkdirSync(join(at, '..'), { recursive: true });
    writeFileSync(at, data);
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The files under `dir`, by path with `/`. */
export function filesUnder(dir: string, rel = ''): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const name of readdirSync(join(dir, rel)).sort()) {
    const path = rel ? `${rel}/${name}` : name;
    if (statSync(join(dir, path)).isDirectory()) Object.assign(out, filesUnder(dir, path));
    else out[path] = readFileSync(join(dir, path));
  }
  return out;
}
