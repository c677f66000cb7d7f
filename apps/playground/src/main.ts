import type { PlayedEpisode } from '@poad/trainer';
import type { BackendChoice, FromWorker, ToWorker } from './protocol.js';
import {
  checkSettings,
  ENVIRONMENTS,
  type EnvFamily,
  type PlaygroundAlgorithm,
  type SessionSettings,
} from './session.js';

// The page: settings, buttons, and the views the worker's messages fill in.

/** The embedded default model, served by the site itself (see vite.config.ts). */
const MODEL_URL = new URL('models/default/', document.baseURI).href;

const $ = <T extends HTMLElement>(id: string) => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el as T;
};
const envSel = $<HTMLSelectElement>('env');
const taskSel = $<HTMLSelectElement>('task');
const algoSel = $<HTMLSelectElement>('algo');
const seedIn = $<HTMLInputElement>('seed');
const envsIn = $<HTMLInputElement>('envs');
const stepsIn = $<HTMLInputElement>('steps');
const backendSel = $<HTMLSelectElement>('backend');
const buttons = {
  train: $<HTMLButtonElement>('train'),
  pause: $<HTMLButtonElement>('pause'),
  step: $<HTMLButtonElement>('step'),
  reset: $<HTMLButtonElement>('reset'),
  greedy: $<HTMLButtonElement>('play-greedy'),
  sampled: $<HTMLButtonElement>('play-sampled'),
  csv: $<HTMLButtonElement>('download-csv'),
  adapter: $<HTMLButtonElement>('download-adapter'),
  run: $<HTMLButtonElement>('download-run'),
};
const loadIn = $<HTMLInputElement>('load-run');

function fillOptions(
  sel: HTMLSelectElement,
  values: readonly string[],
  labels?: (v: string) => string,
) {
  const keep = sel.value;
  sel.replaceChildren(
    ...values.map((v) => {
      const o = document.createElement('option');
      o.value = v;
      o.textContent = labels ? labels(v) : v;
      return o;
    }),
  );
  if (values.includes(keep)) sel.value = keep;
}

function fillFamily() {
  const fam = ENVIRONMENTS[envSel.value as EnvFamily];
  fillOptions(taskSel, fam.tasks);
  fillOptions(algoSel, fam.algorithms, (a) => a.toUpperCase());
}

fillOptions(envSel, Object.keys(ENVIRONMENTS), (k) => ENVIRONMENTS[k as EnvFamily].label);
fillFamily();
envSel.addEventListener('change', fillFamily);

// Settings may come from the URL, e.g. ?env=overcooked&task=tomato-salad&algo=ntpo&backend=wasm.
const params = new URLSearchParams(location.search);
for (const [key, el] of [
  ['env', envSel],
  ['task', taskSel],
  ['algo', algoSel],
  ['seed', seedIn],
  ['envs', envsIn],
  ['steps', stepsIn],
  ['backend', backendSel],
] as const) {
  const v = params.get(key);
  if (v !== null) {
    el.value = v;
    if (key === 'env') fillFamily();
  }
}

/**
 * Backend options from the URL: `?threads=4` (wasm threads; default the browser's core count),
 * `?allowSoftware=1` (accept a software WebGPU adapter such as SwiftShader, for tests).
 */
function backendParams(): { threads?: number; allowSoftwareAdapter?: boolean } {
  const t = Number(params.get('threads'));
  return {
    ...(Number.isInteger(t) && t > 0 ? { threads: t } : {}),
    ...(params.get('allowSoftware') === '1' ? { allowSoftwareAdapter: true } : {}),
  };
}

function settings(): SessionSettings {
  return checkSettings({
    env: envSel.value as EnvFamily,
    task: taskSel.value,
    algo: algoSel.value as PlaygroundAlgorithm,
    seed: Number(seedIn.value),
    envs: Number(envsIn.value),
    numSteps: Number(stepsIn.value),
  });
}

let worker: Worker | null = null;
let state: 'none' | 'starting' | 'idle' | 'training' | 'busy' = 'none';

function setState(s: typeof state) {
  state = s;
  const has = s === 'idle' || s === 'training' || s === 'busy';
  buttons.train.disabled = s === 'training' || s === 'starting' || s === 'busy';
  buttons.step.disabled = buttons.train.disabled;
  buttons.pause.disabled = s !== 'training';
  for (const b of [buttons.greedy, buttons.sampled, buttons.csv, buttons.adapter, buttons.run]) {
    b.disabled = !has;
  }
  for (const el of [envSel, taskSel, algoSel, seedIn, envsIn, stepsIn, backendSel]) {
    el.disabled = s !== 'none';
  }
}

function message(text: string, error = false) {
  const el = $('message');
  el.textContent = text;
  el.classList.toggle('error', error);
}

function showEpisode(played: PlayedEpisode, greedy: boolean) {
  const box = $('episode');
  const table = document.createElement('table');
  table.className = 'episode';
  played.steps.forEach((st, i) => {
    const tr = table.insertRow();
    const n = tr.insertCell();
    n.textContent = String(i + 1);
    const obs = tr.insertCell();
    obs.className = 'obs';
    obs.textContent = st.observation.trim();
    const acts = tr.insertCell();
    for (const a of [...st.actions].sort((x, y) => y.prob - x.prob)) {
      const row = document.createElement('div');
      row.className = `action${a.label === st.chosen ? ' chosen' : ''}`;
      const p = document.createElement('span');
      p.className = 'p';
      p.textContent = a.prob.toFixed(3);
      const bar = document.createElement('span');
      bar.className = 'bar';
      bar.style.width = `${Math.round(a.prob * 120)}px`;
      const label = document.createElement('span');
      label.textContent = `${a.label}${a.label === st.chosen ? '  ← chosen' : ''}`;
      row.append(p, bar, label);
      acts.append(row);
    }
  });
  const ep = played.episode;
  const summary = document.createElement('p');
  summary.textContent = ep
    ? `${greedy ? 'Greedy' : 'Sampled'} episode over after ${ep.length} steps: ${ep.success ? 'success' : 'no success'}, discounted return ${ep.discountedReturn.toFixed(3)}.`
    : `${greedy ? 'Greedy' : 'Sampled'} episode stopped after ${played.steps.length} steps without ending.`;
  box.replaceChildren(summary, table);
}

function download(name: string, mime: string, bytes: Uint8Array) {
  const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type: mime }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

const fmt = (v: unknown, digits = 3) =>
  typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : '–';

function onMessage(m: FromWorker) {
  switch (m.type) {
    case 'status':
      message(m.text);
      return;
    case 'ready':
      envSel.value = m.settings.env;
      fillFamily();
      taskSel.value = m.settings.task;
      algoSel.value = m.settings.algo;
      seedIn.value = String(m.settings.seed);
      if (m.settings.envs) envsIn.value = String(m.settings.envs);
      if (m.settings.numSteps) stepsIn.value = String(m.settings.numSteps);
      $('backend-info').textContent = `${m.backend}${m.note ? ` — ${m.note}` : ''}`;
      $('iteration').textContent = String(m.iteration);
      if (m.curve) $('curve').innerHTML = m.curve;
      message(m.iteration > 0 ? `run loaded at iteration ${m.iteration}` : 'ready');
      return;
    case 'iteration': {
      const r = m.summary.row;
      $('iteration').textContent = String(m.iteration);
      $('speed').textContent =
        `(${fmt(m.summary.seconds, 1)} s for the last one; ${r.envSteps} env steps so far)`;
      $('last-metrics').textContent =
        `success ${fmt(r.successRate, 2)} · return ${fmt(r.episodeReturn)} · entropy ${fmt(r.entropy)} · approx KL ${fmt(r.approxKl, 4)} · value loss ${fmt(r.valueLoss, 4)}`;
      $('curve').innerHTML = m.curve;
      $('credit').innerHTML = m.credit;
      return;
    }
    case 'episode':
      showEpisode(m.played, m.greedy);
      return;
    case 'file':
      download(m.name, m.mime, m.bytes);
      message(`downloaded ${m.name}`);
      return;
    case 'training':
      setState('training');
      return;
    case 'idle':
      if (state !== 'none') setState('idle');
      return;
    case 'error':
      message(m.message, true);
      if (state === 'starting') reset();
      else setState('idle');
      return;
  }
}

function send(m: ToWorker, transfer: Transferable[] = []) {
  worker?.postMessage(m, transfer);
}

function startWorker(first: ToWorker, transfer: Transferable[] = []) {
  worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });
  worker.onmessage = (e: MessageEvent<FromWorker>) => onMessage(e.data);
  worker.onerror = (e) => {
    message(`the worker failed: ${e.message}`, true);
    reset();
  };
  setState('starting');
  send(first, transfer);
}

function ensureWorker(): boolean {
  if (worker) return true;
  try {
    startWorker({
      type: 'init',
      settings: settings(),
      backend: backendSel.value as BackendChoice,
      modelUrl: MODEL_URL,
      ...backendParams(),
    });
    return true;
  } catch (e) {
    message((e as Error).message, true);
    return false;
  }
}

function reset() {
  worker?.terminate();
  worker = null;
  setState('none');
  $('iteration').textContent = '0';
  $('speed').textContent = '';
  $('last-metrics').textContent = '';
  $('backend-info').textContent = 'not started';
}

buttons.train.addEventListener('click', () => {
  if (!ensureWorker()) return;
  send({ type: 'train' });
  setState('busy');
});
buttons.pause.addEventListener('click', () => {
  send({ type: 'pause' });
  message('pausing after this iteration…');
});
buttons.step.addEventListener('click', () => {
  if (!ensureWorker()) return;
  send({ type: 'step' });
  setState('busy');
});
buttons.reset.addEventListener('click', () => {
  reset();
  message('reset: the next Train or Step starts a new run');
});
buttons.greedy.addEventListener('click', () => send({ type: 'play', greedy: true }));
buttons.sampled.addEventListener('click', () => send({ type: 'play', greedy: false }));
buttons.csv.addEventListener('click', () => send({ type: 'download', what: 'csv' }));
buttons.adapter.addEventListener('click', () => send({ type: 'download', what: 'adapter' }));
buttons.run.addEventListener('click', () => send({ type: 'download', what: 'run' }));
loadIn.addEventListener('change', async () => {
  const file = loadIn.files?.[0];
  if (!file) return;
  reset();
  const zip = new Uint8Array(await file.arrayBuffer());
  startWorker(
    {
      type: 'load',
      zip,
      backend: backendSel.value as BackendChoice,
      modelUrl: MODEL_URL,
      ...backendParams(),
    },
    [zip.buffer],
  );
  loadIn.value = '';
});

setState('none');
