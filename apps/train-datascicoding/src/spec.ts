import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BUILTIN_DATASETS,
  createDataSciCodingEnv,
  type DatasetSpec,
} from '@poad/envs-datascicoding';
import { OptionError, writeJsonAtomicSync } from '@poad/run-kit';
import type { AppSpec } from '@poad/trainer';

/** Dataset spec of the resolved options: a built-in dataset, or `--csv FILE --target COLUMN`. */
export function datasetOf(task: string, o: Record<string, unknown> = {}): DatasetSpec {
  if (task === 'csv') {
    if (typeof o.csv !== 'string' || typeof o.target !== 'string') {
      throw Object.assign(new Error('--dataset csv needs --csv FILE and --target COLUMN'), {
        name: 'EnvArgumentError',
      });
    }
    return {
      csv: o.csv,
      target: o.target,
      ...(typeof o.maxRows === 'number' ? { maxRows: o.maxRows } : {}),
    };
  }
  return task as DatasetSpec;
}

export const dataSciApp: AppSpec = {
  command: 'train:datascicoding',
  family: 'datascicoding',
  summary:
    'Train a code-writing agent: it writes the body of build_model(x_train, y_train), which runs in a sandboxed Python (scikit-learn) and is scored by mean ROC AUC over 5 splits (-1 on failure).',
  taskOption: 'dataset',
  tasks: [...BUILTIN_DATASETS, 'csv'],
  defaultTask: 'breast_cancer',
  envId: (task) => `datascicoding/${task}`,
  makeEnv: (task, o) => createDataSciCodingEnv(datasetOf(task, o)),
  evalTasks: (task) => [task],
  validate: (o) => {
    datasetOf(String(o.task), o);
    if (o.tokenSpace === 'labels') {
      throw new OptionError(
        "--token-space labels needs a list of valid labels per step; DataSciCoding's actions are free-form code. Use --token-space vocabulary",
      );
    }
    if (o.task !== 'csv' && (o.csv !== undefined || o.target !== undefined)) {
      throw new OptionError('--csv and --target go with --dataset csv');
    }
  },
  extraOptions: {
    csv: {
      type: 'string',
      optional: true,
      placeholder: 'file',
      description: 'CSV file for --dataset csv',
    },
    target: {
      type: 'string',
      optional: true,
      placeholder: 'column',
      description: 'Target column of --csv',
    },
    maxRows: {
      type: 'integer',
      optional: true,
      min: 10,
      description: 'Use the first N complete rows of --csv (default 2000)',
    },
  },
  async onIteration(report, runDir, agent) {
    // Keep the best program found so far (and its score) in the run directory.
    const file = join(runDir, 'best.json');
    let best = existsSync(file)
      ? (JSON.parse(readFileSync(file, 'utf8')) as { reward: number }).reward
      : Number.NEGATIVE_INFINITY;
    const { buffer } = report;
    for (let i = 0; i < buffer.rewards.length; i++) {
      const reward = buffer.rewards[i]!;
      if (!(reward > best)) continue;
      best = reward;
      const ids = Array.from(buffer.action(i));
      const body = (await Promise.all(ids.map((t) => agent.tokenText(t)))).join('');
      writeJsonAtomicSync(file, { reward, iteration: report.iteration, body });
    }
  },
  examples: [
    'npm run train:datascicoding -- --dataset breast_cancer',
    'npm run train:datascicoding -- --dataset csv --csv data/titanic.csv --target Survived --algo ntpo',
  ],
};
