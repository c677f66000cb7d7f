// The label-level prior of embedded models on the food-preparation family: along the optimal
// path of every task (walk to the item, grab it, walk to the appliance, open it, put the item in,
// close it), the probability each model's untrained policy gives the optimal label among the
// valid ones, under the TWOSOME sampler every algorithm acts with (summed token log-probs ÷ word
// count, softmax over the labels).
//
//   npm run prior-report -w @poad/default-model-builder [-- --models default,NAME=DIR,… --out FILE.json]
// (`default` is the embedded model, `informative-prior` its informative-prior variant, e.g.
// `--models default,informative=informative-prior`; `NAME=DIR` takes any model folder.)
import { writeFileSync } from 'node:fs';
import {
  createVirtualHomeEnv,
  foodNouns,
  VIRTUALHOME_TASKS,
  type VirtualHomeTask,
} from '@poad/envs-virtualhome';
import { candidateDistribution, candidateNormaliser } from '@poad/ppo';
import { createLmAgent, releaseBackend, resolveModelPath } from '@poad/trainer';

/** One state of a task's optimal path and each model's probability of the optimal label. */
export interface PriorRow {
  task: string;
  step: number;
  optimal: string;
  labels: number;
  /** model name → probability of the optimal label, and its rank among the labels (1 = first). */
  models: Record<string, { p: number; rank: number }>;
}

/** The food-preparation task and its variants (every VirtualHome task but entertainment). */
const TASKS = VIRTUALHOME_TASKS.filter(
  (t): t is Exclude<VirtualHomeTask, 'entertainment'> => t !== 'entertainment',
);

/** The optimal labels of a food-preparation-like task with these nouns, in order. */
export function optimalLabels(item: string, appliance: string): string[] {
  return [
    `walk to the ${item}`,
    `grab the ${item}`,
    `walk to the ${appliance}`,
    `open the ${appliance}`,
    `put the ${item} in the ${appliance}`,
    `close the ${appliance}`,
  ];
}

function optimalPath(task: Exclude<VirtualHomeTask, 'entertainment'>): string[] {
  const { item, appliance } = foodNouns(task);
  return optimalLabels(item, appliance);
}

/** `NAME=DIR` or a `--model` value (its own name). */
function parseModel(spec: string): { name: string; dir: string } {
  const eq = spec.indexOf('=');
  return eq > 0
    ? { name: spec.slice(0, eq), dir: resolveModelPath(spec.slice(eq + 1)) }
    : { name: spec, dir: resolveModelPath(spec) };
}

/**
 * The prior of each model (`NAME=DIR` or a `--model` value) at every state of every task's
 * optimal path.
 */
export async function priorReport(models: readonly string[]): Promise<PriorRow[]> {
  const rows: PriorRow[] = [];
  for (const spec of models) {
    const { name, dir } = parseModel(spec);
    const agent = await createLmAgent({
      model: dir,
      backend: 'wasm',
      threads: 1,
      seed: 1,
      lora: { r: 8, alpha: 16 },
    });
    const policy = agent.policy;
    let r = 0;
    for (const task of TASKS) {
      const env = createVirtualHomeEnv(task);
      let step = await env.reset({ seed: 0 });
      for (const [k, optimal] of optimalPath(task).entries()) {
        const labels = step.actions ?? [];
        const c = labels.indexOf(optimal);
        if (c < 0) throw new Error(`${task}, step ${k + 1}: '${optimal}' is not a valid label`);
        const prompt = await policy.encodePrompt(step.observation);
        const ids = await policy.encodeContinuations(step.observation, labels);
        const scores = await policy.scoreCandidates!([prompt], [ids]);
        const sums = scores[0]!.map((lp) => lp.reduce((a, x) => a + x, 0));
        const norms = labels.map((l, j) => candidateNormaliser(l, ids[j]!.length, 'words'));
        const { probs } = candidateDistribution(sums, norms);
        const p = probs[c]!;
        const rank = 1 + Array.from(probs).filter((x) => x > p).length;
        if (rows.length <= r)
          rows.push({ task, step: k + 1, optimal, labels: labels.length, models: {} });
        rows[r]!.models[name] = { p, rank };
        r++;
        step = await env.step(optimal);
      }
      await env.close();
    }
    agent.dispose();
  }
  return rows;
}

/** The report as a Markdown table with per-task means. */
export function priorMarkdown(rows: readonly PriorRow[], models: readonly string[]): string {
  const lines = [
    `| task | step: optimal label | labels | uniform | ${models.map((m) => `p(optimal), rank: ${m}`).join(' | ')} |`,
    `|---|---|---|---|${models.map(() => '---').join('|')}|`,
  ];
  for (const row of rows)
    lines.push(
      `| ${row.task} | ${row.step}: ${row.optimal} | ${row.labels} | ${(1 / row.labels).toFixed(3)} | ${models.map((m) => `${row.models[m]!.p.toFixed(3)}, ${row.models[m]!.rank}`).join(' | ')} |`,
    );
  lines.push(
    '',
    '| task | mean uniform | ' + models.map((m) => `mean p(optimal): ${m}`).join(' | ') + ' |',
  );
  lines.push(`|---|---|${models.map(() => '---').join('|')}|`);
  for (const task of [...new Set(rows.map((r) => r.task))]) {
    const rs = rows.filter((r) => r.task === task);
    const mean = (f: (r: PriorRow) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
    lines.push(
      `| ${task} | ${mean((r) => 1 / r.labels).toFixed(3)} | ${models.map((m) => mean((r) => r.models[m]!.p).toFixed(3)).join(' | ')} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const models = (arg('models') ?? 'default').split(',');
  const rows = await priorReport(models);
  const out = arg('out');
  if (out) writeFileSync(out, `${JSON.stringify(rows, null, 2)}\n`);
  process.stdout.write(
    priorMarkdown(
      rows,
      models.map((m) => parseModel(m).name),
    ),
  );
  await releaseBackend();
}
