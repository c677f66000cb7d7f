/**
 * Which prompt format an agent uses (the `promptFormat` option settled against the model: `auto`
 * becomes `chat` when the model has a chat template), with the date its template sees and the ids
 * that end a chat reply; and setting that format on the algorithm's policy.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OptionError } from '@poad/config';
import { type ChatTemplate, readChatTemplate, type TextTokenizer } from '@poad/hf-files';
import { LmPolicy } from '../policy/lm-policy.js';
import { type PromptFormatOption, promptClock, promptDateOf } from '../prompt-format.js';
import type { Agent } from './agent.js';

/** The prompt format an agent uses: `plain`, or `chat` with the model's template and a date. */
export type ChosenPrompt =
  | { format: 'plain' }
  | { format: 'chat'; template: ChatTemplate; date: string; stopTokenIds: number[] };

/** The options {@link choosePrompt} reads (those of `createLmAgent`). */
export interface PromptRequest {
  /** The model as the user named it (for messages). */
  readonly model: string;
  readonly promptFormat?: PromptFormatOption;
  readonly promptDate?: string;
}

/** The `eos_token_id`s of a model folder's generation_config.json (none when it has none). */
async function generationStopIds(folder: string): Promise<number[]> {
  try {
    const json = JSON.parse(await readFile(join(folder, 'generation_config.json'), 'utf8')) as {
      eos_token_id?: unknown;
    };
    const ids = Array.isArray(json.eos_token_id) ? json.eos_token_id : [json.eos_token_id];
    return ids.filter((id): id is number => Number.isInteger(id) && id >= 0);
  } catch {
    return [];
  }
}

/**
 * The format `o` asks for on the model in `folder`. `chat` reads the model's template (a model
 * without one is refused; `auto` falls back to `plain`), fixes its date (`promptDate`, default
 * today) and ends replies at the tokenizer's EOS and the `eos_token_id`s of
 * generation_config.json that the tokenizer knows.
 */
export async function choosePrompt(
  o: PromptRequest,
  folder: string,
  tokenizer: TextTokenizer,
): Promise<ChosenPrompt> {
  const asked = o.promptFormat ?? 'plain';
  if (asked === 'plain') return { format: 'plain' };
  const template = await readChatTemplate(folder);
  if (template === undefined) {
    if (asked === 'auto') return { format: 'plain' };
    throw new OptionError(
      `promptFormat (--prompt-format) chat: the model ${o.model} has no chat template (no "chat_template" in tokenizer_config.json, no chat_template.jinja); use plain or auto`,
    );
  }
  const date = o.promptDate ?? promptDateOf();
  promptClock(date);
  const ids = [
    ...(tokenizer.eosId === undefined ? [] : [tokenizer.eosId]),
    ...(await generationStopIds(folder)),
  ].filter((id) => id < tokenizer.vocabSize);
  return { format: 'chat', template, date, stopTokenIds: [...new Set(ids)] };
}

/**
 * Sets a chosen `chat` format on the policy an algorithm built (the registry's `createPolicy`
 * takes no prompt format); `plain` is every policy's default. A policy that is not an `LmPolicy`
 * cannot take a chat template: it is disposed and refused.
 */
export function usePrompt(
  policy: { dispose?(): void },
  prompt: ChosenPrompt,
  algorithm: string,
): void {
  if (prompt.format !== 'chat') return;
  if (!(policy instanceof LmPolicy)) {
    policy.dispose?.();
    throw new OptionError(
      `promptFormat (--prompt-format) chat: the policy of --algo ${algorithm} is not an LmPolicy and cannot take a chat template; use plain`,
    );
  }
  policy.setPromptFormat({
    kind: 'chat',
    template: prompt.template,
    now: promptClock(prompt.date),
  });
}

/** What the agent records of its prompt (`Agent.prompt`). */
export function promptRecord(prompt: ChosenPrompt): NonNullable<Agent['prompt']> {
  return prompt.format === 'chat' ? { format: 'chat', date: prompt.date } : { format: 'plain' };
}
