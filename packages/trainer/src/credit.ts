import { join } from 'node:path';
import { tokenCreditSvg, writeFileAtomicSync } from '@poad/run-kit';
import type { Agent } from './agent/agent.js';
import { tokenCreditRows } from './credit-rows.js';
import type { RunIterationReport } from './run-trainer.js';

/**
 * Writes `token-credit.svg`: the {@link tokenCreditRows} of the last rollout, drawn by
 * `@poad/run-kit`'s `tokenCreditSvg`.
 */
export async function writeTokenCredit(
  runDir: string,
  report: Pick<RunIterationReport, 'iteration' | 'buffer' | 'credit'>,
  agent: Agent,
  rows = 6,
): Promise<void> {
  const out = await tokenCreditRows(report, (id) => agent.tokenText(id), rows);
  const { credit } = report;
  writeFileAtomicSync(
    join(runDir, 'token-credit.svg'),
    tokenCreditSvg(
      `Per-token ${credit.name}, iteration ${report.iteration} (${credit.level} level)`,
      out,
    ),
  );
}
