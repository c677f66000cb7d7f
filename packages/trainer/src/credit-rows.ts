import type { TokenCreditRow } from '@poad/run-kit';
import type { RunIterationReport } from './run-trainer.js';

/**
 * Per-token credit (PPO's advantages, ETPO's soft TD errors) of up to `rows` distinct actions of
 * an iteration's rollout, as the token-credit view shows them (like the paper's case study):
 * rewarded steps first, each action once, with the last prompt tokens as the state. For TWOSOME
 * (action-level advantages) every token of an action shows the action's advantage.
 */
export async function tokenCreditRows(
  report: Pick<RunIterationReport, 'buffer' | 'credit'>,
  tokenText: (id: number) => Promise<string>,
  rows = 6,
): Promise<TokenCreditRow[]> {
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
    const stateText = (await Promise.all(prompt.map(tokenText))).join('').trim();
    out.push({
      state: `…${stateText.slice(-70)}  (reward ${buffer.rewards[i]!.toFixed(3)})`,
      tokens: await Promise.all(ids.map(tokenText)),
      advantages: adv,
    });
  }
  return out;
}
