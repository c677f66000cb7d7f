import { join } from 'node:path';
import type { IterationReport } from '@poad/ppo';
import { type TokenCreditRow, tokenCreditSvg, writeFileAtomicSync } from '@poad/run-kit';
import type { Agent } from './agent.js';

/**
 * Writes `token-credit.svg`: per-token advantages of a few chosen actions from the last rollout
 * (like the paper's case study). Rewarded steps come first; each action appears once. For
 * TWOSOME (action-level advantages) every token of an action shows the action's advantage.
 */
export async function writeTokenCredit(
  runDir: string,
  report: IterationReport,
  agent: Agent,
  rows = 6,
): Promise<void> {
  const { buffer, advantages } = report;
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
      advantages.level === 'token'
        ? Array.from(advantages.advantages.subarray(start, start + ids.length))
        : ids.map(() => advantages.advantages[i]!);
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
      `Per-token advantages, iteration ${report.iteration} (${advantages.level} level)`,
      out,
    ),
  );
}
