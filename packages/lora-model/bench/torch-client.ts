import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';

/** One timed PyTorch step. */
export interface TorchStep {
  seconds: number;
  tokens: number;
  /** CUDA peak memory of the config so far, bytes (0 or absent on the CPU). */
  peak?: number;
}

/**
 * A long-lived PyTorch baseline process (bench/torch_bench.py --serve). Each `step` call runs one
 * step of the same model and mode in Python and returns its time, so the benchmark can alternate
 * TF.js and PyTorch steps and both see the same machine load.
 */
export class TorchBaseline {
  private proc: ChildProcessWithoutNullStreams;
  private lines: Interface;
  private queue: Array<(line: string) => void> = [];
  private stderr = '';
  /** Where PyTorch runs, in words (from the Python process). */
  device = '';

  private constructor(proc: ChildProcessWithoutNullStreams) {
    this.proc = proc;
    this.lines = createInterface({ input: proc.stdout });
    this.lines.on('line', (l) => this.queue.shift()?.(l));
    proc.stderr.on('data', (d: Buffer) => {
      this.stderr += d.toString();
    });
  }

  /**
   * Start the Python process (`POAD_PYTHON`, else the first of /usr/bin/python3 and python3 that
   * imports torch); null (with the reason printed) when torch is unavailable.
   */
  static async start(spec: unknown): Promise<TorchBaseline | null> {
    const script = join(import.meta.dirname, 'torch_bench.py');
    const candidates = process.env.POAD_PYTHON
      ? [process.env.POAD_PYTHON]
      : ['/usr/bin/python3', 'python3'].filter((p) => p === 'python3' || existsSync(p));
    let reason = 'no Python interpreter';
    for (const python of candidates) {
      const proc = spawn(python, [script, '--serve', JSON.stringify(spec)]);
      const t = new TorchBaseline(proc);
      const first = await Promise.race([
        t.next(),
        new Promise<string>((resolve) => proc.on('exit', () => resolve('exit'))),
        new Promise<string>((resolve) => proc.on('error', () => resolve('exit'))),
      ]);
      if (first.startsWith('ready')) {
        t.device = first.slice('ready'.length).trim();
        return t;
      }
      reason = `${python}: ${t.stderr.trim().split('\n').pop() ?? first}`;
    }
    console.log(`PyTorch baseline unavailable: ${reason}`);
    return null;
  }

  private next(): Promise<string> {
    return new Promise((resolve) => this.queue.push(resolve));
  }

  /** Run one step of `mode` on config `name` and return its time. */
  async step(name: string, mode: string): Promise<TorchStep> {
    const reply = this.next();
    this.proc.stdin.write(`${name} ${mode}\n`);
    const line = await reply;
    try {
      return JSON.parse(line) as TorchStep;
    } catch {
      throw new Error(`PyTorch baseline failed: ${line} ${this.stderr}`);
    }
  }

  /** Stop the process. */
  close(): void {
    this.proc.stdin.end();
    this.lines.close();
  }
}
