import { vi } from 'vitest';

/**
 * Runs `run` with `process.stdout.write` caught (nothing reaches the terminal meanwhile) and
 * gives its result and the text it wrote, e.g. a command's `--help`.
 */
export async function captureStdout<T>(
  run: () => Promise<T>,
): Promise<{ result: T; text: string }> {
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
    out.push(String(s));
    return true;
  });
  try {
    const result = await run();
    return { result, text: out.join('') };
  } finally {
    spy.mockRestore();
  }
}
