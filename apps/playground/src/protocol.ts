import type { PlayedEpisode } from '@poad/trainer';
import type { IterationSummary, SessionSettings } from './session.js';

// Messages between the page (main.ts) and the training worker (worker.ts).

export type BackendChoice = 'auto' | 'webgpu' | 'wasm' | 'cpu';

/** Which backend the worker starts and where the model is served. */
export interface BackendRequest {
  backend: BackendChoice;
  modelUrl: string;
  /** Threads of the wasm backend. */
  threads?: number;
  /** Accept a software WebGPU adapter (SwiftShader): slow, for tests. */
  allowSoftwareAdapter?: boolean;
}

export type ToWorker =
  | {
      type: 'init';
      settings: SessionSettings;
      backend: BackendChoice;
      modelUrl: string;
      threads?: number;
    }
  | { type: 'load'; zip: Uint8Array; backend: BackendChoice; modelUrl: string; threads?: number }
  | { type: 'train' }
  | { type: 'pause' }
  | { type: 'step' }
  | { type: 'play'; greedy: boolean }
  | { type: 'download'; what: 'csv' | 'adapter' | 'run' };

export type FromWorker =
  | {
      type: 'ready';
      settings: SessionSettings;
      /** What runs, e.g. "wasm (SIMD, 4 threads)". */
      backend: string;
      /** Why wasm runs on one thread, when it does. */
      note?: string;
      iteration: number;
      /** Learning curve of the restored metrics (a loaded checkpoint). */
      curve?: string;
    }
  | {
      type: 'iteration';
      iteration: number;
      summary: IterationSummary;
      curve: string;
      credit: string;
    }
  | { type: 'episode'; played: PlayedEpisode; greedy: boolean }
  | { type: 'file'; name: string; mime: string; bytes: Uint8Array }
  | { type: 'status'; text: string }
  | { type: 'training' }
  | { type: 'idle' }
  | { type: 'error'; message: string };
