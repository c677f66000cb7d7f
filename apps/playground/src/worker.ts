/// <reference lib="webworker" />
import { loadCausalLM } from '@poad/lora-model';
import { initBackend } from '@poad/tfjs-kernels';
import { learningCurveSvg, tokenCreditSvg } from '@poad/trainer';
import wasmPlain from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm?url';
import wasmSimd from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm?url';
import wasmThreaded from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm?url';
import type { BackendRequest, FromWorker, ToWorker } from './protocol.js';
import { ENVIRONMENTS, Session, type SessionSettings } from './session.js';

// The training worker: owns the TF.js backend, the model and the session, so that the page stays
// responsive while an iteration runs.

declare const self: DedicatedWorkerGlobalScope;

let session: Session | null = null;
let backendReady: Promise<{ description: string; singleThreadReason?: string }> | null = null;
let running = false;
let busy = false;

const post = (m: FromWorker, transfer: Transferable[] = []) => self.postMessage(m, transfer);

function startBackend(r: BackendRequest) {
  backendReady ??= initBackend(r.backend, {
    ...(r.threads ? { threads: r.threads } : {}),
    allowSoftwareAdapter: r.allowSoftwareAdapter === true,
    wasmPaths: {
      'tfjs-backend-wasm.wasm': wasmPlain,
      'tfjs-backend-wasm-simd.wasm': wasmSimd,
      'tfjs-backend-wasm-threaded-simd.wasm': wasmThreaded,
    },
  });
  return backendReady;
}

function title(s: SessionSettings): string {
  return `${s.algo.toUpperCase()} on ${ENVIRONMENTS[s.env].label} ${s.task}, seed ${s.seed}`;
}

async function open(settings: SessionSettings, r: BackendRequest) {
  post({ type: 'status', text: 'starting the backend…' });
  const info = await startBackend(r);
  post({ type: 'status', text: `loading the model on ${info.description}…` });
  session?.dispose();
  session = null;
  // The embedded model has no tokenizer_config.json (no request that would only 404).
  const s = await Session.create(settings, (o) =>
    loadCausalLM(r.modelUrl, { ...o, tokenizerConfig: false }),
  );
  session = s;
  return { info, s };
}

async function iterateOnce(): Promise<void> {
  const s = session!;
  const summary = await s.iterate();
  post({
    type: 'iteration',
    iteration: s.iteration,
    summary,
    curve: curveOf(s),
    credit: tokenCreditSvg(summary.credit.title, summary.credit.rows),
  });
}

function curveOf(s: Session): string {
  return learningCurveSvg(s.metrics, title(s.settings));
}

/** Tells the page what runs and where the run stands (a loaded run: its iteration and curve). */
function postReady(info: { description: string; singleThreadReason?: string }, s: Session): void {
  post({
    type: 'ready',
    settings: s.settings,
    backend: info.description,
    ...(info.singleThreadReason ? { note: `one thread: ${info.singleThreadReason}` } : {}),
    iteration: s.iteration,
    ...(s.metrics.length > 0 ? { curve: curveOf(s) } : {}),
  });
}

/** Iterates until paused; requests that arrive meanwhile (play, download) run between iterations. */
async function trainLoop(): Promise<void> {
  while (running && session) {
    await iterateOnce();
    // Let the worker take its messages (a pause, a request): an iteration's awaits resolve as
    // microtasks, which never let a message event in.
    await new Promise((resolve) => setTimeout(resolve, 0));
    while (queue.length > 0) {
      const next = queue.shift()!;
      if (next.type !== 'train') await handle(next);
    }
  }
}

async function handle(m: ToWorker): Promise<void> {
  switch (m.type) {
    case 'init': {
      const { info, s } = await open(m.settings, m);
      postReady(info, s);
      return;
    }
    case 'load': {
      const { info, s } = await open(Session.settingsOf(m.zip), m);
      await s.restore(m.zip);
      postReady(info, s);
      return;
    }
    case 'train':
      running = true;
      post({ type: 'training' });
      await trainLoop();
      return;
    case 'step':
      await iterateOnce();
      return;
    case 'play': {
      const played = await session!.play(m.greedy, session!.iteration + 1000);
      post({ type: 'episode', played, greedy: m.greedy });
      return;
    }
    case 'download': {
      const s = session!;
      const base = `${s.settings.env}-${s.settings.task}-${s.settings.algo}-s${s.settings.seed}-it${s.iteration}`;
      if (m.what === 'csv') {
        const bytes = new TextEncoder().encode(s.metricsCsv());
        post({ type: 'file', name: `${base}-metrics.csv`, mime: 'text/csv', bytes }, [
          bytes.buffer,
        ]);
      } else {
        const bytes = m.what === 'adapter' ? await s.adapterZip() : await s.checkpoint();
        const name = `${base}-${m.what === 'adapter' ? 'peft-adapter' : 'run'}.zip`;
        post({ type: 'file', name, mime: 'application/zip', bytes }, [bytes.buffer]);
      }
      return;
    }
    case 'pause':
      return;
  }
}

// Messages are handled one at a time, except `pause`, which stops a training loop between
// iterations.
const queue: ToWorker[] = [];
self.onmessage = (e: MessageEvent<ToWorker>) => {
  if (e.data.type === 'pause') {
    running = false;
    return;
  }
  queue.push(e.data);
  void drain();
};

async function drain(): Promise<void> {
  if (busy) return;
  busy = true;
  while (queue.length > 0) {
    const m = queue.shift()!;
    try {
      await handle(m);
    } catch (err) {
      running = false;
      // Without a session, what was queued behind a failed start cannot run.
      if (m.type === 'init' || m.type === 'load') queue.length = 0;
      post({ type: 'error', message: (err as Error).message ?? String(err) });
    }
  }
  busy = false;
  if (!running) post({ type: 'idle' });
}
