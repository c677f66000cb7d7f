import { join } from 'node:path';
import { type TokenCreditRow, tokenCreditSvg, writeFileAtomicSync } from '@poad/run-kit';
import type { Agent } from './agent.js';
import type { RunIterationReport } from './run-trainer.js';

/**
 * Writes `token-credit.svg`: per-token credit (PPO's advantages, ETPO's soft TD errors) of a few
 * chosen actions from the last rollout (like the paper's case study). Rewarded steps come first;
 * each action appears once. For TWOSOME (action-level advantages) every token of an action shows
 * the action's advantage.
 */
export async function writeTokenCredit(
  runDir: string,
  report: Pick<RunIterationReport, 'iteration' | 'buffer' | 'credit'>,
  agent: Agent,
  rows = 6,
): Promise<void> {
  const { buffer, credit } = report;
  const n = buffer.rewards.length;
  const order = [...Array(n).keys()].sort(
    (a, b) => Math.abs(buffer.rewards[b]!) - Math.abs(buffer.rewards[a]!),
  );
  const seen = new Set<string>();
  const out: TokenCreditRow[] = [];
  for (const i of order) {
    if (out.length >= rows) break;
    const ids = Array.from(buffer.action(i));
    const key = ids.join(',');
    if (seen.has(key)) continue;
    seen.add(key);
    const start = buffer.actionOffsets[i]!;
    const adv =
      credit.level === 'token'
        ? ids.map((_, k) => credit.values[start + k]!)
        : ids.map(() => credit.values[i]!);
    const prompt = Array.from(buffer.prompt(i)).slice(-10);
    const stateText = (await Promise.all(prompt.map((t) => agent.tokenText(t)))).join('').trim();
    out.push({
      state: `…${stateText.slice(-70)}  (reward ${buffer.rewards[i]!.toFixed(3)})`,
      tokens: await Promise.all(ids.map((t) => agent.tokenText(t))),
      advantages: adv,
    });
  }
  writeFileAtomicSync(
    join(runDir, 'token-credit.svg'),
    tokenCreditSvg(
      `Per-token ${credit.name}, iteration ${report.iteration} (${credit.level} level)`,
      out,
    ),
  );
}
