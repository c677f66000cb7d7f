import { renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOvercookedEnv, type OvercookedEnv } from '../src/index.js';

/** The documentation picture's scene: tomato-lettuce salad, a chopped tomato, the bowl carried. */
export function exampleScene(): OvercookedEnv {
  const env = createOvercookedEnv('tomato-lettuce-salad');
  env.resetSync();
  for (const label of [
    'pick up the tomato',
    'put the tomato on the first cutting board',
    'chop the tomato',
    'take the empty bowl',
  ]) {
    env.stepSync(label);
  }
  return env;
}

/** The documentation picture, {@link exampleScene} drawn as SVG. */
export function exampleSvg(): string {
  return exampleScene().renderSvg('overcooked/tomato-lettuce-salad after four macro-actions');
}

/** Writes docs/example.svg atomically (temporary file in the same folder, then rename). */
function main(): void {
  const here = dirname(fileURLToPath(import.meta.url));
  const target = join(here, '..', 'docs', 'example.svg');
  const temp = `${target}.${process.pid}.tmp`;
  writeFileSync(temp, exampleSvg());
  renameSync(temp, target);
  console.log(`wrote ${target}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
