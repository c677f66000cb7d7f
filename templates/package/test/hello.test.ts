import { describe, expect, it } from 'vitest';
import { hello } from '../src/hello.js';

describe('hello', () => {
  it('greets by name', () => {
    expect(hello('poad')).toBe('hello, poad');
  });
  it('rejects an empty name', () => {
    expect(() => hello('')).toThrow(TypeError);
  });
});
