import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';

/** One timed PyTorch step. */
export interface TorchStep {
  seconds: number;
  tokens: number;
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

  private constructor(proc: ChildProcessWithoutNullStreams) {
    this.proc = proc;
    this.lines = createInterface({ input: proc.stdout });
    this.lines.on('line', (l) => this.queue.shift()?.(l));
    proc.stderr.on('data', (d: Buffer) => {
      this.stderr += d.toString();
    });
  }

  /** Start the Python process; null (with the reason printed) when torch is unavailable. */
  static async start(spec: unknown): Promise<TorchBaseline | null> {
    const script = join(import.meta.dirname, 'torch_bench.py');
    const proc = spawn('/usr/bin/python3', [script, '--serve', JSON.stringify(spec)]);
    const t = new TorchBaseline(proc);
    const first = await Promise.race([
      t.next(),
      new Promise<string>((resolve) => proc.on('exit', () => resolve('exit'))),
    ]);
    if (first !== 'ready') {
      console.log(`PyTorch baseline unavailable: ${t.stderr.trim().split('\n').pop() ?? first}`);
      return null;
    }
    return t;
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
