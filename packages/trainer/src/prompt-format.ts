// The prompt-format run options, without Node built-ins (the browser entry's RUN_OPTIONS has them).
// How a policy encodes in each format is `PromptFormat` of policy/prompt-encoding.ts; how `auto`
// settles for a model, `choosePrompt` of agent/choose-prompt.ts.
import { OptionError } from '@poad/config';

/**
 * The `promptFormat` run option (`--prompt-format`): `auto` (the model's chat template when it
 * has one, else `plain`), `plain` (BOS + the observation, what the embedded models were trained
 * on), `chat` (the observation as the user message of the model's chat template). A run records
 * the format it used, `plain` or `chat`, in its config.json; runs recorded without one are `plain`.
 */
export const PROMPT_FORMATS = ['auto', 'plain', 'chat'] as const;

/** A value of the `promptFormat` run option. */
export type PromptFormatOption = (typeof PROMPT_FORMATS)[number];

/** The `promptDate` run option's form. */
export const PROMPT_DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/** `date`'s local calendar day as `YYYY-MM-DD`, what a chat run records as its `promptDate`. */
export function promptDateOf(date: Date = new Date()): string {
  const p2 = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p2(date.getMonth() + 1)}-${p2(date.getDate())}`;
}

/**
 * The clock a chat template's `strftime_now` reads for a recorded `promptDate`: local midnight of
 * that day, so that the template writes the same day in every time zone.
 */
export function promptClock(promptDate: string): Date {
  const m = PROMPT_DATE.exec(promptDate);
  const d = m ? new Date(Number(promptDate.slice(0, 4)), Number(m[1]) - 1, Number(m[2])) : null;
  if (!d || promptDateOf(d) !== promptDate) {
    throw new OptionError(
      `promptDate (--prompt-date): ${JSON.stringify(promptDate)} is not a calendar date; write YYYY-MM-DD, e.g. 2025-01-31`,
    );
  }
  return d;
}
