import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { exampleScene, exampleSvg } from '../scripts/example-svg.js';
import { createOvercookedEnv, renderOvercookedSvg } from '../src/index.js';

describe('render', () => {
  it('draws the start of the tomato salad as a text grid', () => {
    const env = createOvercookedEnv('tomato-salad');
    env.resetSync();
    expect(env.render()).toBe(
      [
        '#  #  #  #  #  #t #',
        'K  .  .  .  @  .  #',
        '#  .  .  .  .  .  #',
        'D  .  .  .  .  .  #',
        '#  .  .  .  .  .  #',
        '#  .  .  .  .  .  #',
        '#  #  #  #  #  #b #',
        'agent at (1,4) holds nothing',
        'cutting board 1 at (1,0) holds nothing',
        'primitive steps: 0',
      ].join('\n'),
    );
  });

  it('shows held and chopped items (the scene of the documentation picture)', () => {
    const text = exampleScene().render();
    expect(text.split('\n')[1]).toBe('KT .  .  .  .  .  #l');
    expect(text).toContain('agent at (5,5) holds empty bowl');
    expect(text).toContain('cutting board 1 at (1,0) holds chopped tomato');
  });

  it('writes a well-formed SVG with one square per cell', () => {
    const env = createOvercookedEnv('tomato-salad');
    env.resetSync();
    const svg = renderOvercookedSvg(env.snapshot(), 'start <v4>');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg.match(/<rect x="\d+" y="\d+" width="56" height="56"/g)).toHaveLength(49);
    expect(svg).toContain('start &lt;v4&gt;');
  });

  it('docs/example.svg is up to date with its generator', () => {
    const stored = readFileSync(new URL('../docs/example.svg', import.meta.url), 'utf8');
    expect(stored).toBe(exampleSvg());
  });
});
