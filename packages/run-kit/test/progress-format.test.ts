import { describe, expect, it } from 'vitest';
import { ProgressBar } from '../src/progress.js';

const megabytes = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

describe('ProgressBar with a value formatter', () => {
  it('writes the done and total counts through format, the ETA from the rate so far', () => {
    let t = 0;
    const out: string[] = [];
    const bar = new ProgressBar({
      total: 50_000_000,
      label: 'org/model',
      format: megabytes,
      now: () => t,
      lineIntervalMs: 0,
      stream: { write: (s: string) => out.push(s), isTTY: false },
    });
    t = 4_000;
    const text = bar.update(20_000_000, { rate: '5.0 MB/s' });
    expect(text).toContain('org/model [');
    expect(text).toContain(' 40% 20.0 MB/50.0 MB | 4s elapsed, ETA 6s | rate 5.0 MB/s');
    expect(out).toEqual([`${text}\n`]);
  });

  it('keeps the integers and the unit without one', () => {
    const bar = new ProgressBar({
      total: 3,
      unit: 'it',
      now: () => 0,
      stream: { write: () => true, isTTY: false },
    });
    expect(bar.update(1)).toContain(' 33% 1/3 it | ');
    const bare = new ProgressBar({ total: 3, now: () => 0, stream: { write: () => true } });
    expect(bare.update(1)).toContain(' 33% 1/3 | ');
  });
});
